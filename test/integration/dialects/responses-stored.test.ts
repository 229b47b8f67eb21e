import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { expectOpenAI } from '../../helpers/conformance';
import { StoredResponse } from '../../../shared/db/models';

/** GET /v1/responses/{id}/input_items and DELETE /v1/responses/{id}, through the official SDK. */
describe('stored responses: input items and delete', () => {
  let o: TestOrg;
  let client: OpenAI;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });

  const input: OpenAI.Responses.ResponseInput = [
    { role: 'developer', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'input_text', text: 'first question' }] },
    { role: 'assistant', content: 'first answer' },
    { type: 'message', role: 'user', content: 'second question' },
  ];

  it("lists a response's input items in OpenAI's list shape, newest first by default, paged by the SDK", async () => {
    const r = await client.responses.create({ model: 'sim-chat', input });
    const page = await client.responses.inputItems.list(r.id);
    const body = (await call('GET', `/v1/responses/${r.id}/input_items`, { headers: keyHeader(o.key) })).body;
    expectOpenAI('ResponseItemList', body);
    expect(body).to.include({ object: 'list', first_id: page.data[0].id, last_id: page.data.at(-1)!.id });
    const texts = page.data.map((i) => {
      const m = i as { type: string; role: string; content: Array<{ text: string }> };
      return `${m.role}:${m.content[0].text}`;
    });
    expect(texts).to.deep.equal(['user:second question', 'assistant:first answer', 'user:first question', 'developer:Be brief.']);
    expect(page.has_more).to.equal(false);
    for (const i of page.data) expect(i).to.include({ type: 'message', status: 'completed' }).and.to.have.property('id').that.is.a('string');
    expect((page.data[1] as { content: unknown[] }).content[0]).to.include({ type: 'output_text', text: 'first answer' });
    expect((page.data[0] as { content: unknown[] }).content[0]).to.deep.equal({ type: 'input_text', text: 'second question' });

    // The SDK follows `after` from page to page; ascending order gives the request's order.
    const asc: string[] = [];
    for await (const i of client.responses.inputItems.list(r.id, { order: 'asc', limit: 3 })) asc.push(i.id);
    expect(asc).to.deep.equal([...page.data].reverse().map((i) => i.id));
    const first = await client.responses.inputItems.list(r.id, { order: 'asc', limit: 3 });
    expect(first.data).to.have.length(3);
    expect(first.has_more).to.equal(true);

    const raw = await call('GET', `/v1/responses/${r.id}/input_items?order=asc&limit=2&after=${asc[0]}`, { headers: keyHeader(o.key) });
    expect(raw.status, raw.text).to.equal(200);
    expect(raw.body).to.deep.equal({ object: 'list', data: raw.body.data, first_id: asc[1], last_id: asc[2], has_more: true });
    const before = await call('GET', `/v1/responses/${r.id}/input_items?order=asc&limit=2&before=${asc[3]}`, { headers: keyHeader(o.key) });
    expect(before.body.data.map((i: { id: string }) => i.id)).to.deep.equal([asc[1], asc[2]]);
    expect(before.body.has_more).to.equal(true);
  });

  it('lists a string input as one user message, for streamed responses too', async () => {
    const s = await postSse('/v1/responses', keyHeader(o.key), { model: 'sim-chat', input: 'just a string', stream: true });
    const id = s.events[0].data.response.id;
    const page = await client.responses.inputItems.list(id);
    expect(page.data).to.have.length(1);
    expect(page.data[0]).to.deep.include({ type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'just a string' }] });
    expect(page.data[0].id).to.match(/^msg_/);
  });

  it("keeps an assistant message's phase (commentary, final_answer) in the listed items, as OpenAI's ResponseOutputMessage has it; another value is refused naming it", async () => {
    const r = await client.responses.create({
      model: 'sim-chat',
      input: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: 'looking', phase: 'commentary' },
        { role: 'assistant', content: 'done', phase: 'final_answer' },
        { role: 'user', content: 'again' },
      ],
    });
    const page = await client.responses.inputItems.list(r.id, { order: 'asc' });
    expect(page.data.map((i) => (i as { phase?: unknown }).phase)).to.deep.equal([undefined, 'commentary', 'final_answer', undefined]);
    const bad = await client.responses.create({ model: 'sim-chat', input: [{ role: 'assistant', content: 'x', phase: 'thinking' as 'commentary' }, { role: 'user', content: 'y' }] }).catch((e: unknown) => e);
    expect(bad).to.be.instanceOf(OpenAI.BadRequestError);
    expect((bad as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('input[0].phase');
  });

  it('refuses a bad limit or order (400, the param named) and answers 404 for an unknown, unstored or foreign id', async () => {
    const r = await client.responses.create({ model: 'sim-chat', input: 'x' });
    const h = keyHeader(o.key);
    for (const [q, param] of [['limit=0', 'limit'], ['limit=101', 'limit'], ['order=sideways', 'order'], ['after=a&after=b', 'after']]) {
      const bad = await call('GET', `/v1/responses/${r.id}/input_items?${q}`, { headers: h });
      expect(bad.status, q).to.equal(400);
      expect(bad.body.error).to.include({ type: 'invalid_request_error', param });
    }
    for (const id of ['%00', '%ED%A0%80', 'x'.repeat(300), '..%2F..']) {
      for (const [method, path] of [['GET', `/v1/responses/${id}/input_items`], ['DELETE', `/v1/responses/${id}`]] as const) {
        const odd = await call(method, path, { headers: h });
        expect(odd.status, `${method} ${path}`).to.be.oneOf([400, 404]);
        expect(odd.text).not.to.match(/\bat .+\.js:\d+/);
      }
    }
    for (const q of ['after=%00', 'before=%ED%A0%80', `after=${'y'.repeat(5000)}`, 'limit=1e2', 'order[]=asc']) {
      const odd = await call('GET', `/v1/responses/${r.id}/input_items?${q}`, { headers: h });
      expect(odd.status, q).to.be.oneOf([200, 400]);
    }
    const unstored = await client.responses.create({ model: 'sim-chat', input: 'x', store: false });
    const other = await buildOrg(env().redis);
    const foreign = new OpenAI({ apiKey: other.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    for (const [c, id] of [[client, 'resp_doesnotexist'], [client, unstored.id], [foreign, r.id]] as const) {
      const err = await c.responses.inputItems.list(id).catch((e: unknown) => e);
      expect(err, id).to.be.instanceOf(OpenAI.NotFoundError);
      expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).to.equal('response_not_found');
    }
  });

  it("deletes a response of the caller's org: {id, object: response.deleted, deleted: true}, then it is gone", async () => {
    const r = await client.responses.create({ model: 'sim-chat', input: 'delete me' });
    const other = await buildOrg(env().redis);
    const foreign = new OpenAI({ apiKey: other.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const refused = await foreign.responses.delete(r.id).catch((e: unknown) => e);
    expect(refused, "another org's id is not found").to.be.instanceOf(OpenAI.NotFoundError);
    expect(await StoredResponse.count({ where: { id: r.id } })).to.equal(1);

    const answer = await client.responses.delete(r.id);
    expect(answer).to.deep.equal({ id: r.id, object: 'response.deleted', deleted: true });
    expect(await StoredResponse.count({ where: { id: r.id } })).to.equal(0);
    for (const gone of [() => client.responses.retrieve(r.id), () => client.responses.delete(r.id), () => client.responses.inputItems.list(r.id)]) {
      const err = await (gone() as Promise<unknown>).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(OpenAI.NotFoundError);
      expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).to.equal('response_not_found');
    }
    const followUp = await client.responses.create({ model: 'sim-chat', input: 'and then?', previous_response_id: r.id }).catch((e: unknown) => e);
    expect(followUp, 'a follow-up of a deleted response').to.be.instanceOf(OpenAI.BadRequestError);
    expect(followUp).to.include({ code: 'previous_response_not_found', param: 'previous_response_id' });
    expect(env().sim.log.entries.filter((e) => JSON.stringify(e.body).includes('and then?'))).to.have.length(0);
  });
});
