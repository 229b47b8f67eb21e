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
    const r = await call('GET', '/v1/models', { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' } });
    expect(r.status).to.equal(200);
    expect(r.body).to.have.keys('data', 'has_more', 'first_id', 'last_id');
    expect(r.body.has_more).to.equal(false);
    const m = r.body.data[0];
    expect(m.type).to.equal('model');
    expect(m.display_name).to.be.a('string');
    expect(new Date(m.created_at).toISOString()).to.equal(m.created_at);
    expect(r.body.first_id).to.equal(r.body.data[0].id);
  });

  it('serves one model and 404 model_not_found', async () => {
    const r = await call('GET', '/v1/models/sim-chat', { headers: keyHeader(o.key) });
    expect(r.body.id).to.equal('sim-chat');
    const missing = await call('GET', '/v1/models/nope', { headers: keyHeader(o.key) });
    expect(missing.status).to.equal(404);
    expect(missing.body.error.code).to.equal('model_not_found');
  });

  it('is listed by the official openai client', async () => {
    const client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1` });
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).to.include('sim-chat');
  });
});
