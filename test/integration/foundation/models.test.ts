import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';

describe('GET /v1/models', () => {
  let o: TestOrg;
  before(async () => {
    o = await buildOrg(env().redis);
  });

  it('lists the catalog in the chat-completions shape by default', async () => {
    const r = await call('GET', '/v1/models', { headers: keyHeader(o.key) });
    expect(r.status).to.equal(200);
    expect(r.body.object).to.equal('list');
    const ids = r.body.data.map((m: { id: string }) => m.id);
    expect(ids).to.include.members(['sim-chat', 'sim-embed', 'sim-rerank', 'sim-image', 'sim-whisper', 'sim-decide']);
    const chat = r.body.data.find((m: { id: string }) => m.id === 'sim-chat');
    expect(chat).to.include({ object: 'model', context_window: 128000 });
    expect(chat.created).to.be.a('number');
    expect(chat.capabilities).to.deep.equal({
      chat: true, embeddings: false, rerank: false, image_generation: false, transcription: false, vision: true, decision: false,
    });
    expect(chat.compatibility.anthropic_messages).to.equal(true);
    for (const cap of ['chat', 'embeddings', 'rerank', 'image_generation', 'transcription', 'vision', 'decision']) {
      expect(r.body.data.some((m: { capabilities: Record<string, boolean> }) => m.capabilities[cap]), cap).to.equal(true);
    }
    expect(JSON.stringify(r.body)).not.to.include('sim-chat-1'); // upstream names never leak
  });

  it('uses the messages-dialect shape with anthropic-version', async () => {
    // one page of all models (the list is paged, 20 by default, as Anthropic's)
    const r = await call('GET', '/v1/models?limit=1000', { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' } });
    expect(r.status).to.equal(200);
    expect(r.body).to.have.keys('data', 'has_more', 'first_id', 'last_id');
    expect(r.body.has_more).to.equal(false);
    const m = r.body.data[0];
    expect(m.type).to.equal('model');
    expect(m.display_name).to.be.a('string');
    expect(new Date(m.created_at).toISOString()).to.equal(m.created_at);
    expect(r.body.first_id).to.equal(r.body.data[0].id);
    expect(r.body.last_id).to.equal(r.body.data.at(-1).id);
    // the same catalog as the default shape: chat and decision models alike, with their extras (newest first, as Anthropic lists them)
    const plain = await call('GET', '/v1/models', { headers: keyHeader(o.key) });
    expect(r.body.data.map((x: { id: string }) => x.id)).to.have.members(plain.body.data.map((x: { id: string }) => x.id));
    const decide = r.body.data.find((x: { id: string }) => x.id === 'sim-decide');
    expect(decide.type).to.equal('model');
    expect(decide.capabilities.decision).to.equal(true);
    expect(decide.compatibility.systemone).to.equal(true);
    const chat = r.body.data.find((x: { id: string }) => x.id === 'sim-chat');
    expect(chat.context_window).to.equal(128000);
    expect(chat.compatibility.anthropic_messages).to.equal(true);
  });

  it('is global: every org, on every plan and every auth surface, sees the same entries', async () => {
    const free = await buildOrg(env().redis, { plan: 'free' });
    const a = await call('GET', '/v1/models', { headers: keyHeader(o.key) });
    const b = await call('GET', '/v1/models', { headers: keyHeader(free.key) });
    const c = await call('GET', `/a/${free.key}/v1/models`);
    expect(a.status).to.equal(200);
    expect(b.status).to.equal(200);
    expect(c.status).to.equal(200);
    expect(b.body).to.deep.equal(a.body);
    expect(c.body).to.deep.equal(a.body);
  });

  it('serves one model and 404 model_not_found', async () => {
    const r = await call('GET', '/v1/models/sim-chat', { headers: keyHeader(o.key) });
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ id: 'sim-chat', object: 'model' });
    const listed = (await call('GET', '/v1/models', { headers: keyHeader(o.key) })).body.data.find((m: { id: string }) => m.id === 'sim-chat');
    expect(r.body).to.deep.equal(listed);
    const anthropic = await call('GET', '/v1/models/sim-chat', { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' } });
    expect(anthropic.status).to.equal(200);
    expect(anthropic.body).to.include({ id: 'sim-chat', type: 'model' });
    const missing = await call('GET', '/v1/models/nope', { headers: keyHeader(o.key) });
    expect(missing.status).to.equal(404);
    expect(missing.body.error.code).to.equal('model_not_found');
  });

  it('compatibility metadata tells the truth: each chat model answers exactly the client APIs it claims', async () => {
    const models = (await call('GET', '/v1/models', { headers: keyHeader(o.key) })).body.data.filter((m: { capabilities: { chat: boolean } }) => m.capabilities.chat);
    expect(models.map((m: { id: string }) => m.id)).to.include.members(['sim-chat', 'sim-claude']);
    for (const m of models as Array<{ id: string; compatibility: Record<string, boolean> }>) {
      const legacy = await call('POST', '/v1/completions', { headers: keyHeader(o.key), json: { model: m.id, prompt: 'compat', max_tokens: 5 } });
      expect(legacy.status === 200, `${m.id}: openai_completions ${m.compatibility.openai_completions}, answered ${legacy.status} ${legacy.text}`).to.equal(m.compatibility.openai_completions);
      const chat = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: m.id, messages: [{ role: 'user', content: 'compat' }], max_tokens: 5 } });
      expect(chat.status === 200, `${m.id}: chat ${chat.status}`).to.equal(m.compatibility.openai_chat_completions);
    }
  });

  it('is listed by the official openai client', async () => {
    const client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1` });
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).to.include('sim-chat');
  });
});
