import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';

const chatBody = (model = 'sim-chat', extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user', content: 'hello gateway' }],
  ...extra,
});

async function readSse(res: Response): Promise<string[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((b) => b.startsWith('data: '))
    .map((b) => b.slice(6));
}

describe('POST /v1/chat/completions', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
  });

  it('answers JSON with the public model id, usage and a usage event', async () => {
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: chatBody() });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.model).to.equal('sim-chat');
    expect(r.body.object).to.equal('chat.completion');
    expect(r.body.choices[0].message.content).to.include('hello gateway');
    expect(r.body.choices[0].finish_reason).to.equal('stop');
    expect(r.body.usage.prompt_tokens).to.be.greaterThan(0);
    expect(env().sim.log.entries[0].model).to.equal('sim-chat-1');
    const requestId = r.headers.get('x-service-request-id')!;
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { requestId } });
    expect(events).to.have.length(1);
    expect(events[0]).to.include({ orgId: o.org.id, model: 'sim-chat', lane: 'interactive', modality: 'chat' });
    expect(events[0].inputTokens).to.equal(r.body.usage.prompt_tokens);
    expect(events[0].outputTokens).to.equal(r.body.usage.completion_tokens);
  });

  it('streams SSE chunks with the public id and [DONE]', async () => {
    const res = await fetch(`${env().gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify(chatBody('sim-chat', { stream: true })),
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
    const events = await readSse(res);
    expect(events.at(-1)).to.equal('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks.every((c) => c.model === 'sim-chat')).to.equal(true);
    expect(chunks.some((c) => c.usage)).to.equal(false); // not asked for
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).to.include('hello gateway');
  });

  it('a stream the upstream sends in one write (every event in one read) arrives whole and in order, with usage and one usage event', async () => {
    const streamOnce = async (oneWrite: boolean) => {
      env().sim.knobs.set('sim-chat-1', { oneWrite, outputWords: 20 });
      const res = await fetch(`${env().gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
        body: JSON.stringify(chatBody('sim-chat', { stream: true, stream_options: { include_usage: true } })),
      });
      expect(res.status).to.equal(200);
      const events = await readSse(res);
      expect(events.at(-1)).to.equal('[DONE]');
      return { id: res.headers.get('x-request-id'), chunks: events.slice(0, -1).map((e) => JSON.parse(e) as { model: string; choices: Array<{ delta?: { content?: string } }>; usage?: { completion_tokens: number } }) };
    };
    const [paced, once] = [await streamOnce(false), await streamOnce(true)];
    const text = (c: typeof once.chunks) => c.map((x) => x.choices[0]?.delta?.content ?? '').join('');
    expect(once.chunks.length).to.equal(paced.chunks.length);
    expect(text(once.chunks)).to.equal(text(paced.chunks));
    expect(once.chunks.every((c) => c.model === 'sim-chat')).to.equal(true);
    const tokens = once.chunks.at(-1)!.usage!.completion_tokens;
    expect(tokens).to.be.greaterThan(0).and.equal(paced.chunks.at(-1)!.usage!.completion_tokens);
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { requestId: once.id! } });
    expect(events.map((e) => e.outputTokens)).to.deep.equal([tokens]);
  });

  it('passes stream_options.include_usage through', async () => {
    const res = await fetch(`${env().gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify(chatBody('sim-chat', { stream: true, stream_options: { include_usage: true } })),
    });
    const chunks = (await readSse(res)).slice(0, -1).map((e) => JSON.parse(e));
    const last = chunks.at(-1);
    expect(last.choices).to.deep.equal([]);
    expect(last.usage.completion_tokens).to.be.greaterThan(0);
  });

  it('passes tool calls and forwards unknown fields', async () => {
    const r = await call('POST', '/v1/chat/completions', {
      headers: keyHeader(o.key),
      json: chatBody('sim-chat', {
        tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }],
        tool_choice: 'required',
        some_vendor_field: { a: 1 },
      }),
    });
    expect(r.status).to.equal(200);
    expect(r.body.choices[0].finish_reason).to.equal('tool_calls');
    expect(r.body.choices[0].message.tool_calls[0].function.name).to.equal('lookup');
    expect((env().sim.log.entries[0].body as Record<string, unknown>).some_vendor_field).to.deep.equal({ a: 1 });
  });

  it('serves legacy /v1/completions', async () => {
    const r = await call('POST', '/v1/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', prompt: 'say hi' } });
    expect(r.status).to.equal(200);
    expect(r.body.object).to.equal('text_completion');
    expect(r.body.model).to.equal('sim-chat');
    expect(r.body.choices[0].text).to.include('say hi');
  });

  it('rejects bad input without reaching the upstream or billing', async () => {
    const cases: Array<[unknown, number, string]> = [
      [{ messages: [{ role: 'user', content: 'x' }] }, 400, 'invalid_request'],
      [{ model: 'sim-chat' }, 400, 'missing_required_parameter'],
      [{ model: 'sim-chat', messages: [] }, 400, 'empty_array'],
      [{ model: 'sim-chat', messages: [{ role: 'wizard', content: 'x' }] }, 400, 'invalid_value'],
      [{ model: 'nope', messages: [{ role: 'user', content: 'x' }] }, 404, 'model_not_found'],
      [{ model: 'sim-embed', messages: [{ role: 'user', content: 'x' }] }, 404, 'model_not_chat_capable'],
    ];
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    for (const [body, status, code] of cases) {
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: body });
      expect(r.status, JSON.stringify(body)).to.equal(status);
      expect(r.body.error.code).to.equal(code);
    }
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
  });

  it('works with the official openai client: chat and stream', async () => {
    const client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1` });
    const c = await client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'from sdk' }] });
    expect(c.model).to.equal('sim-chat');
    expect(c.choices[0].message.content).to.include('from sdk');
    const stream = await client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'streamed sdk' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).to.include('streamed sdk');
  });
});
