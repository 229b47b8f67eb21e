import { expect } from 'chai';
import OpenAI from 'openai';
import { QueryTypes } from 'sequelize';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { expectOpenAI } from '../../helpers/conformance';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { UsageEvent } from '../../../shared/db/models';
import { db } from '../../../shared/db/sequelize';
import { expireStoredResponses } from '../../../shared/responses/retention';

const DAY_MS = 86_400_000;

/** What the SDK's call rejects with, or 'answered'. */
const outcome = (p: Promise<unknown>) => p.then(() => 'answered' as const, (e: unknown) => e);

function expectStatus(err: unknown, status: number, param?: string): void {
  expect(err).to.be.instanceOf(OpenAI.APIError);
  const e = err as InstanceType<typeof OpenAI.APIError>;
  expect(e.status).to.equal(status);
  if (param) expect(e.param).to.equal(param);
}

/**
 * OpenAI's stored completions: `store: true` on `POST /v1/chat/completions`, then retrieve, list
 * (model and metadata filters, pages), update metadata, delete and the request's messages, through
 * the official SDK and against the vendored OpenAPI document.
 */
describe('chat completions stored with store: true', () => {
  let o: TestOrg;
  let client: OpenAI;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });

  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: 'developer', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'text', text: 'write a haiku ' }, { type: 'text', text: 'about bees' }] },
  ];

  it('keeps the answer as it was given: retrieve returns it with its metadata, messages lists the request, update changes the metadata, delete removes it', async () => {
    const made = await client.chat.completions.create({ model: 'sim-chat', messages, store: true, metadata: { topic: 'bees', run: 'a' } });
    const sent = env().sim.log.entries.at(-1)!.body as Record<string, unknown>;
    expect(sent, 'the gateway keeps it: the upstream is not asked to store it under the platform’s account').to.not.have.any.keys('store', 'metadata');
    const got = await client.chat.completions.retrieve(made.id);
    expect(got).to.deep.equal({ ...made, metadata: { topic: 'bees', run: 'a' } });
    const raw = await call('GET', `/v1/chat/completions/${made.id}`, { headers: keyHeader(o.key) });
    expectOpenAI('CreateChatCompletionResponse', raw.body);

    const listed = await client.chat.completions.messages.list(made.id);
    expect(listed.data.map((m) => ({ ...m }))).to.deep.equal([
      { id: `${made.id}-0`, role: 'developer', content: 'Be brief.', refusal: null, name: null, content_parts: null },
      { id: `${made.id}-1`, role: 'user', content: 'write a haiku about bees', refusal: null, name: null, content_parts: messages[1].content },
    ]);
    const desc = await call('GET', `/v1/chat/completions/${made.id}/messages?order=desc&limit=1`, { headers: keyHeader(o.key) });
    expect(desc.body).to.deep.include({ object: 'list', first_id: `${made.id}-1`, last_id: `${made.id}-1`, has_more: true });

    const updated = await client.chat.completions.update(made.id, { metadata: { topic: 'wasps' } });
    // the SDK's ChatCompletion type has no metadata; the answer carries it as OpenAI's does
    const metaOf = (c: unknown) => (c as { metadata?: unknown }).metadata;
    expect(metaOf(updated)).to.deep.equal({ topic: 'wasps' });
    expect(metaOf(await client.chat.completions.retrieve(made.id))).to.deep.equal({ topic: 'wasps' });

    const deleted = await client.chat.completions.delete(made.id);
    expect(deleted).to.deep.equal({ object: 'chat.completion.deleted', id: made.id, deleted: true });
    expectOpenAI('ChatCompletionDeleted', deleted);
    expectStatus(await outcome(client.chat.completions.retrieve(made.id)), 404);
    expectStatus(await outcome(client.chat.completions.delete(made.id)), 404);
  });

  it("lists each message with the SDK's ChatCompletionStoreMessage fields: refusal (an assistant's, else null), content_parts of its text and image parts, tool calls as sent", async () => {
    const image = { type: 'image_url' as const, image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } };
    const lookup = { id: 'call_1', type: 'function' as const, function: { name: 'lookup', arguments: '{"q":"bees"}' } };
    const asked: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: 'user', name: 'ann', content: [{ type: 'text', text: 'what is ' }, image] },
      { role: 'assistant', content: null, refusal: 'I cannot say.' },
      { role: 'assistant', content: [{ type: 'text', text: 'Partly: ' }, { type: 'refusal', refusal: 'no more.' }] },
      { role: 'assistant', content: null, tool_calls: [lookup] },
      { role: 'tool', tool_call_id: 'call_1', content: 'bees make honey' },
      { role: 'user', content: 'and now?' },
    ];
    const made = await client.chat.completions.create({ model: 'sim-chat', messages: asked, store: true });
    const items: OpenAI.Chat.ChatCompletionStoreMessage[] = (await client.chat.completions.messages.list(made.id)).data;
    expect(items.map((m) => m.id)).to.deep.equal(asked.map((_, i) => `${made.id}-${i}`));
    // ChatCompletionMessage's required fields, on every item
    for (const m of items) expect(m, m.id).to.include.all.keys('content', 'refusal', 'role');
    expect(items.map((m) => m.refusal)).to.deep.equal([null, 'I cannot say.', 'no more.', null, null, null]);
    expect(items.map((m) => m.content)).to.deep.equal(['what is ', null, 'Partly: ', null, 'bees make honey', 'and now?']);
    expect(items[0]).to.deep.include({ name: 'ann', content_parts: [{ type: 'text', text: 'what is ' }, image] });
    expect(items[2].content_parts, 'text and image parts only, as the type has them').to.deep.equal([{ type: 'text', text: 'Partly: ' }]);
    expect(items[3].tool_calls).to.deep.equal([lookup]);
    expect(items[4]).to.deep.include({ tool_call_id: 'call_1', content_parts: null });
    // the assistant items against OpenAI's document (its ChatCompletionResponseMessage allows only the assistant role)
    const assistants = items.filter((m) => m.role === 'assistant');
    expectOpenAI('ChatCompletionMessageList', { object: 'list', data: JSON.parse(JSON.stringify(assistants)), first_id: assistants[0].id, last_id: assistants.at(-1)!.id, has_more: false });
  });

  it('a streamed request keeps the completion its chunks add up to, usage included', async () => {
    const stream = await client.chat.completions.create({ model: 'sim-chat', messages, store: true, stream: true, stream_options: { include_usage: true } });
    let id = '';
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      id = chunk.id;
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).to.not.equal('');
    const got = await client.chat.completions.retrieve(id);
    expect(got.object).to.equal('chat.completion');
    expect(got.choices[0].message).to.include({ role: 'assistant', content: text });
    expect(got.choices[0].finish_reason).to.equal('stop');
    expect(got.usage).to.deep.equal(usage);
    expectOpenAI('CreateChatCompletionResponse', JSON.parse(JSON.stringify(got)));
  });

  it('a streamed request without include_usage keeps its usage as OpenAI does, and the client still gets none', async () => {
    const s = await postSse('/v1/chat/completions', keyHeader(o.key), { model: 'sim-chat', messages, store: true, stream: true });
    expect(s.status, s.text).to.equal(200);
    expect(s.text, 'no usage in the stream the client did not ask it of').to.not.include('"usage"');
    const chunks = s.events.filter((e) => e.data !== '[DONE]').map((e) => e.data as OpenAI.ChatCompletionChunk);
    expect(chunks.every((c) => c.choices.length > 0), 'no usage-only chunk').to.equal(true);
    const id = chunks[0].id;
    const got = await client.chat.completions.retrieve(id);
    expect(got.choices[0].message.content).to.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''));
    // this request's own event (the org's newest one may still be an earlier request's while this one's is on its way)
    const requestId = s.headers.get('x-service-request-id')!;
    const event = await waitFor(() => UsageEvent.findOne({ where: { requestId } }), 10_000);
    expect(event, 'the usage event').to.not.equal(null);
    expect(got.usage, 'the usage billed').to.deep.include({ prompt_tokens: event!.inputTokens, completion_tokens: event!.outputTokens });
    expectOpenAI('CreateChatCompletionResponse', JSON.parse(JSON.stringify(got)));
  });

  it('a streamed request that asked for log probabilities keeps them, as the JSON answer has them', async () => {
    const ask = { model: 'sim-chat', messages, logprobs: true, top_logprobs: 2 } as const;
    const stream = await client.chat.completions.create({ ...ask, store: true, stream: true });
    let id = '';
    const streamed: OpenAI.ChatCompletionTokenLogprob[] = [];
    for await (const chunk of stream) {
      id = chunk.id;
      streamed.push(...(chunk.choices[0]?.logprobs?.content ?? []));
    }
    expect(streamed, 'the upstream streamed log probabilities').to.not.be.empty;
    const got = await client.chat.completions.retrieve(id);
    expect(got.choices[0].logprobs?.content).to.deep.equal(streamed);
    expectOpenAI('CreateChatCompletionResponse', JSON.parse(JSON.stringify(got)));
    // a JSON answer to the same request has them in the same shape
    const json = await client.chat.completions.create(ask);
    expect(json.choices[0].logprobs?.content?.[0]).to.have.all.keys(Object.keys(streamed[0]));
  });

  it('lists the org’s stored completions in creation order, filtered by model and metadata, paged with after and limit', async () => {
    const fresh = await buildOrg(env().redis);
    const c = new OpenAI({ apiKey: fresh.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await c.chat.completions.create({ model: i === 3 ? 'sim-claude' : 'sim-chat', messages: [{ role: 'user', content: `q${i}` }], store: true, metadata: { n: String(i), kind: i % 2 ? 'odd' : 'even' } });
      ids.push(r.id);
    }
    await c.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'not stored' }] });

    const all = await call('GET', '/v1/chat/completions', { headers: keyHeader(fresh.key) });
    expectOpenAI('ChatCompletionList', all.body);
    expect(all.body.data.map((r: { id: string }) => r.id)).to.deep.equal(ids);
    expect(all.body).to.include({ first_id: ids[0], last_id: ids[3], has_more: false });

    const page = await c.chat.completions.list({ limit: 2 });
    expect(page.data.map((r) => r.id)).to.deep.equal(ids.slice(0, 2));
    expect(page.hasNextPage()).to.equal(true);
    const next = await page.getNextPage();
    expect(next.data.map((r) => r.id)).to.deep.equal(ids.slice(2));

    const sdkAll: string[] = [];
    for await (const r of c.chat.completions.list({ limit: 1, order: 'desc' })) sdkAll.push(r.id);
    expect(sdkAll, 'the SDK pages through every one, newest first').to.deep.equal([...ids].reverse());

    // a metadata filter no stored metadata can hold (a NUL, in the value or the key) matches nothing: it was a 500 (Postgres refused it in the jsonb filter)
    for (const q of ['metadata[kind]=odd%00', 'metadata[kind%00]=odd', 'metadata[kind]=odd&metadata[n]=%00']) {
      const r = await call('GET', `/v1/chat/completions?${q}`, { headers: keyHeader(fresh.key) });
      expect([r.status, r.body], q).to.deep.equal([200, { object: 'list', data: [], first_id: null, last_id: null, has_more: false }]);
    }

    expect((await c.chat.completions.list({ model: 'sim-claude' })).data.map((r) => r.id)).to.deep.equal([ids[3]]);
    expect((await c.chat.completions.list({ metadata: { kind: 'odd' } })).data.map((r) => r.id)).to.deep.equal([ids[1], ids[3]]);
    expect((await c.chat.completions.list({ metadata: { kind: 'odd', n: '1' } })).data.map((r) => r.id)).to.deep.equal([ids[1]]);

    const others = await client.chat.completions.list({ limit: 100 });
    expect(others.data.map((r) => r.id), 'another org’s list holds none of them').to.not.include.members([ids[0]]);
    expectStatus(await outcome(client.chat.completions.retrieve(ids[0])), 404);
    expectStatus(await outcome(client.chat.completions.update(ids[0], { metadata: {} })), 404);
    expectStatus(await outcome(client.chat.completions.delete(ids[0])), 404);
    expect((await c.chat.completions.retrieve(ids[0])).id, 'still there for its org').to.equal(ids[0]);
  });

  it('refuses bad metadata and a non-boolean store before any upstream call, billing nothing; a completion made without store is not kept', async () => {
    const fresh = await buildOrg(env().redis);
    const c = new OpenAI({ apiKey: fresh.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
    const bad: Array<[string, Record<string, unknown>]> = [
      ['17 keys', { store: true, metadata: many }],
      ['a number value', { store: true, metadata: { n: 1 } }],
      ['a long value', { store: true, metadata: { k: 'x'.repeat(513) } }],
      ['a long key', { store: true, metadata: { ['k'.repeat(65)]: 'v' } }],
      ['an array', { store: true, metadata: ['a'] }],
    ];
    for (const [what, extra] of bad) {
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(fresh.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], ...extra } });
      expect(r.status, what).to.equal(400);
      expect(r.body.error, what).to.include({ code: 'invalid_request', param: 'metadata' });
    }
    const notBool = await call('POST', '/v1/chat/completions', { headers: keyHeader(fresh.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], store: 'yes' } });
    expect(notBool.status).to.equal(400);
    expect(notBool.body.error.message).to.match(/store/);
    expect(env().sim.log.entries, 'nothing reached the upstream').to.have.length(0);

    // metadata without store is OpenAI's 400 (test/integration/chat/openai-field-pairs.test.ts)
    const plain = await c.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] });
    expectStatus(await outcome(c.chat.completions.retrieve(plain.id)), 404);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: fresh.org.id } }), 'only the one answered request is billed').to.equal(1);

    const made = await c.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], store: true });
    for (const [what, json] of [['no metadata', {}], ['another field', { metadata: {}, model: 'x' }], ['bad metadata', { metadata: { a: 2 } }]] as const) {
      const r = await call('POST', `/v1/chat/completions/${made.id}`, { headers: keyHeader(fresh.key), json });
      expect(r.status, what).to.equal(400);
      expect(r.body.error.code, what).to.equal('invalid_request');
    }
    const badOrder = await call('GET', '/v1/chat/completions?order=sideways', { headers: keyHeader(fresh.key) });
    expect([badOrder.status, badOrder.body.error.param]).to.deep.equal([400, 'order']);
    const badLimit = await call('GET', `/v1/chat/completions/${made.id}/messages?limit=0`, { headers: keyHeader(fresh.key) });
    expect([badLimit.status, badLimit.body.error.param]).to.deep.equal([400, 'limit']);
    expect((await call('PUT', `/v1/chat/completions/${made.id}`, { headers: keyHeader(fresh.key), json: {} })).status).to.equal(405);
  });

  it('is kept for the retention (STORED_RESPONSES_RETENTION_DAYS): past it not found at once, and the clock’s sweep deletes the row', async () => {
    const old = await client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'old' }], store: true });
    const young = await client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'young' }], store: true });
    const age = (id: string, days: number) =>
      db().query('UPDATE stored_chat_completions SET created_at = :at WHERE org_id = :org AND id = :id', { replacements: { id, org: o.org.id, at: new Date(Date.now() - days * DAY_MS) } });
    await age(old.id, 30.01);
    await age(young.id, 29.9);
    expectStatus(await outcome(client.chat.completions.retrieve(old.id)), 404);
    expectStatus(await outcome(client.chat.completions.messages.list(old.id)), 404);
    expect((await client.chat.completions.list({ limit: 100 })).data.map((r) => r.id)).to.include(young.id).and.not.include(old.id);
    await expireStoredResponses();
    const [{ n }] = await db().query<{ n: number }>('SELECT count(*)::int AS n FROM stored_chat_completions WHERE org_id = :org AND id IN (:ids)', {
      replacements: { org: o.org.id, ids: [old.id, young.id] },
      type: QueryTypes.SELECT,
    });
    expect(n, 'the old row swept, the young one kept').to.equal(1);
    expect((await client.chat.completions.retrieve(young.id)).id).to.equal(young.id);
  });
});
