import { expect } from 'chai';
import OpenAI from 'openai';
import { QueryTypes } from 'sequelize';
import { env } from '../../helpers/harness';
import { twoProjects } from '../../helpers/openai-org';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { expectOpenAI } from '../../helpers/conformance';
import { usageSettled } from '../../helpers/usage';
import { StoredResponse, UsageEvent } from '../../../shared/db/models';
import { db } from '../../../shared/db/sequelize';
import { conversationItemsSql, storedItemsSql } from '../../../shared/responses/item-lookup';

type Sent = { messages: Array<Record<string, unknown>> };
const sentMessages = () => (env().sim.log.entries.at(-1)!.body as Sent).messages;
const outcome = (p: Promise<unknown>) => p.then(() => 'answered' as const, (e: unknown) => e);
const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { query: { type: 'string' } } }, strict: false }];
const ref = (id: string) => ({ type: 'item_reference', id }) as OpenAI.Responses.ResponseInputItem;

function expectNotFound(err: unknown, id: string, what: string): void {
  expect(err, what).to.be.instanceOf(OpenAI.APIError);
  const e = err as InstanceType<typeof OpenAI.APIError>;
  expect({ status: e.status, code: e.code, param: e.param, type: e.type, message: e.message }, what).to.deep.equal({
    status: 404,
    code: 'item_not_found',
    param: 'input',
    type: 'invalid_request_error',
    message: `404 Item with id '${id}' not found.`,
  });
}

function expectNotFoundIn(err: unknown, id: string): void {
  expect(err).to.be.instanceOf(OpenAI.APIError);
  const e = err as InstanceType<typeof OpenAI.APIError>;
  expect({ status: e.status, code: e.code, param: e.param, message: e.message }).to.deep.equal({ status: 404, code: 'item_not_found', param: 'items', message: `404 Item with id '${id}' not found.` });
}

/**
 * `item_reference` input items (OpenAI's ResponseInputItem.ItemReference): replaced by the stored
 * item they name, an output or input item of a response stored in the request's org and project
 * scope or an item of one of its conversations, before translation; an id found nowhere is OpenAI's
 * 404, before anything is sent or billed (api/routes/responses/item-reference.ts).
 */
describe('responses: item references', () => {
  const s = twoProjects();
  let o: TestOrg;
  let client: OpenAI; // org-wide key
  let projectA: OpenAI;
  let projectB: OpenAI;
  let otherOrg: OpenAI;
  before(async () => {
    o = s.o;
    client = s.client(o.key);
    projectA = s.client(s.keyA);
    projectB = s.client(s.keyB);
    otherOrg = s.client((await buildOrg(env().redis)).key);
  });

  it('a function_call referenced by id, then its output: the stored call goes upstream as the assistant turn before the tool result', async () => {
    const first = await client.responses.create({ model: 'sim-chat', input: 'please call the tool for dogs', tools });
    const fc = first.output.find((i) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    expect(fc.id).to.match(/^fc_/);
    const answer = await client.responses.create({
      model: 'sim-chat',
      tools,
      input: [{ role: 'user', content: 'please call the tool for dogs' }, ref(fc.id!), { type: 'function_call_output', call_id: fc.call_id, output: '{"dogs": 3}' }],
    });
    expect(answer.status).to.equal('completed');
    expect(answer.output_text).to.include('3');
    expect(sentMessages()).to.deep.equal([
      { role: 'user', content: 'please call the tool for dogs' },
      { role: 'assistant', content: null, tool_calls: [{ id: fc.call_id, type: 'function', function: { name: 'lookup', arguments: fc.arguments } }] },
      { role: 'tool', tool_call_id: fc.call_id, content: '{"dogs": 3}' },
    ]);
    // the response's input items hold the item itself, under its id
    const listed = (await client.responses.inputItems.list(answer.id, { order: 'asc' })).data;
    expect(listed[1]).to.deep.include({ id: fc.id, type: 'function_call', call_id: fc.call_id, name: 'lookup', arguments: fc.arguments });
  });

  it("a message referenced by id (an answer, a response's input item, a conversation's item; `type` left out too) goes upstream as stored", async () => {
    const first = await projectA.responses.create({ model: 'sim-chat', input: 'remember PELICAN' });
    const msg = first.output.find((i) => i.type === 'message') as OpenAI.Responses.ResponseOutputMessage;
    const said = (msg.content[0] as OpenAI.Responses.ResponseOutputText).text;
    const [asked] = (await projectA.responses.inputItems.list(first.id)).data;
    const conv = await projectA.conversations.create({ items: [{ type: 'message', role: 'user', content: 'the colour is teal' }] });
    const [convItem] = (await projectA.conversations.items.list(conv.id)).data as Array<{ id: string }>;

    const next = await projectA.responses.create({
      model: 'sim-chat',
      input: [ref(asked.id), { id: msg.id } as unknown as OpenAI.Responses.ResponseInputItem, ref(convItem.id), { role: 'user', content: 'what was the word?' }],
    });
    expect(next.status).to.equal('completed');
    expect(sentMessages()).to.deep.equal([
      { role: 'user', content: 'remember PELICAN' },
      { role: 'assistant', content: said },
      { role: 'user', content: 'the colour is teal' },
      { role: 'user', content: 'what was the word?' },
    ]);
    // the org-wide key reaches the project's items; streamed and counted as well
    const stream = await client.responses.create({ model: 'sim-chat', input: [ref(msg.id), { role: 'user', content: 'again' }], stream: true });
    for await (const ev of stream) if (ev.type === 'response.completed') expect(ev.response.status).to.equal('completed');
    expect(sentMessages()[0]).to.deep.equal({ role: 'assistant', content: said });
    const referenced = await client.responses.inputTokens.count({ model: 'sim-chat', input: [ref(msg.id)] });
    const sent = await client.responses.inputTokens.count({ model: 'sim-chat', input: [{ role: 'assistant', content: said }] });
    expect(referenced.input_tokens).to.equal(sent.input_tokens);
  });

  it("another organization's or another project's id is not found, and neither is one past the retention: nothing is sent", async () => {
    const mine = await projectA.responses.create({ model: 'sim-chat', input: 'project a only' });
    const conv = await projectA.conversations.create({ items: [{ type: 'message', role: 'user', content: 'project a conversation' }] });
    const [convItem] = (await projectA.conversations.items.list(conv.id)).data as Array<{ id: string }>;
    const sentBefore = env().sim.log.entries.length;
    for (const id of [mine.output[0].id!, convItem.id]) {
      for (const [c, who] of [[otherOrg, 'another org'], [projectB, 'another project']] as const) {
        expectNotFound(await outcome(c.responses.create({ model: 'sim-chat', input: [ref(id), { role: 'user', content: 'x' }] })), id, `${who}: ${id}`);
      }
    }
    const old = await projectA.responses.create({ model: 'sim-chat', input: 'long ago' });
    const sentOld = env().sim.log.entries.length;
    await StoredResponse.update({ createdAt: new Date(Date.now() - 40 * 86_400_000) }, { where: { id: old.id } });
    expectNotFound(await outcome(projectA.responses.create({ model: 'sim-chat', input: [ref(old.output[0].id!)] })), old.output[0].id!, 'past the retention');
    expect(env().sim.log.entries.length, 'no refused request reached the upstream').to.equal(sentOld);
    expect(sentOld - sentBefore).to.equal(1);
    // the project's own key finds them
    const found = await projectA.responses.create({ model: 'sim-chat', input: [ref(mine.output[0].id!), ref(convItem.id)] });
    expect(found.status).to.equal('completed');
  });

  it('an unknown id is 404 item_not_found naming input, in OpenAI’s words, before anything is sent or billed, on every route that reads input', async () => {
    await usageSettled();
    const billed = await UsageEvent.count({ where: { orgId: o.org.id } });
    const sent = env().sim.log.entries.length;
    expectNotFound(await outcome(client.responses.create({ model: 'sim-chat', input: [ref('msg_nope'), { role: 'user', content: 'x' }] })), 'msg_nope', 'create');
    expectNotFound(await outcome(client.responses.create({ model: 'sim-chat', input: [ref('fc_nope')], stream: true })), 'fc_nope', 'streamed');
    expectNotFound(await outcome(client.responses.create({ model: 'sim-chat', input: [ref('rs_nope')], background: true })), 'rs_nope', 'background');
    expectNotFound(await outcome(client.responses.inputTokens.count({ model: 'sim-chat', input: [ref('msg_nope')] })), 'msg_nope', 'input_tokens');
    expectNotFound(await outcome(client.responses.compact({ model: 'sim-chat', input: [ref('msg_nope')] })), 'msg_nope', 'compact');
    const unstored = await call('POST', '/v1/responses', { headers: keyHeader(o.key), json: { model: 'sim-chat', store: false, input: [{ type: 'item_reference', id: 'rs_gone' }] } });
    expect(unstored.status).to.equal(404);
    expect(unstored.body).to.deep.equal({
      error: {
        code: 'item_not_found',
        message: "Item with id 'rs_gone' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.",
        type: 'invalid_request_error',
        param: 'input',
      },
    });
    // in OpenAI's codes (missing_required_parameter: openai/codex issue 6725 quotes "Missing required parameter: 'input[79].id'.")
    for (const [bad, code] of [[{ type: 'item_reference' }, 'missing_required_parameter'], [{ type: 'item_reference', id: 5 }, 'invalid_type'], [{ id: '' }, 'empty_string']] as const) {
      const r = await call('POST', '/v1/responses', { headers: keyHeader(o.key), json: { model: 'sim-chat', input: [{ role: 'user', content: 'x' }, bad] } });
      expect([r.status, r.body.error.code, r.body.error.param], JSON.stringify(bad)).to.deep.equal([400, code, 'input[1].id']);
    }
    // one known and one unknown: still refused
    const known = await client.responses.create({ model: 'sim-chat', input: 'known' });
    const sentKnown = env().sim.log.entries.length;
    expectNotFound(await outcome(client.responses.create({ model: 'sim-chat', input: [ref(known.output[0].id!), ref('msg_nope')] })), 'msg_nope', 'one of two');
    expect(env().sim.log.entries.length, 'nothing reached the upstream').to.equal(sentKnown);
    expect(sentKnown - sent).to.equal(1);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'only the known response was billed').to.equal(billed + 1);
  });

  it('a conversation takes item references as POST /v1/responses does: created with one, items added by id (`type` left out too), then continued with them', async () => {
    const first = await projectA.responses.create({ model: 'sim-chat', input: 'please call the tool for dogs', tools });
    const fc = first.output.find((i) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    const [asked] = (await projectA.responses.inputItems.list(first.id)).data;
    const conv = await projectA.conversations.create({ items: [ref(asked.id)] });
    const added = await projectA.conversations.items.create(conv.id, {
      items: [{ id: fc.id } as unknown as OpenAI.Responses.ResponseInputItem, { type: 'function_call_output', call_id: fc.call_id, output: '{"dogs": 3}' }],
    });
    expectOpenAI('ConversationItemList', added);
    // the stored items themselves, under their ids
    expect(added.data[0]).to.deep.include({ id: fc.id, type: 'function_call', call_id: fc.call_id, name: 'lookup', arguments: fc.arguments, status: 'completed' });
    expect(added.data[1]).to.deep.include({ type: 'function_call_output', call_id: fc.call_id, output: '{"dogs": 3}' });
    const listed = (await projectA.conversations.items.list(conv.id, { order: 'asc' })).data as unknown as Array<Record<string, unknown>>;
    expect(listed.map((i) => i.id)).to.deep.equal([asked.id, fc.id, added.data[1].id]);
    expect(listed[0]).to.deep.include({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'please call the tool for dogs' }] });
    // (the org-wide key reaches the project's conversation and item) an item the conversation already holds is refused, as an item sent twice with its id is
    await client.conversations.items.create(conv.id, { items: [ref(fc.id!)] }).then(
      () => expect.fail('an item the conversation holds is not added twice'),
      (e: InstanceType<typeof OpenAI.APIError>) => expect([e.status, e.code, e.param]).to.deep.equal([400, 'invalid_request', 'items']),
    );
    const answer = await projectA.responses.create({ model: 'sim-chat', tools, conversation: conv.id });
    expect(answer.status).to.equal('completed');
    expect(sentMessages()).to.deep.equal([
      { role: 'user', content: 'please call the tool for dogs' },
      { role: 'assistant', content: null, tool_calls: [{ id: fc.call_id, type: 'function', function: { name: 'lookup', arguments: fc.arguments } }] },
      { role: 'tool', tool_call_id: fc.call_id, content: '{"dogs": 3}' },
    ]);
  });

  it("a conversation's unknown, another organization's or another project's item reference is OpenAI's 404 naming items, and nothing is added", async () => {
    const mine = await projectA.responses.create({ model: 'sim-chat', input: 'project a only' });
    const theirs = await otherOrg.conversations.create();
    const inB = await projectB.conversations.create();
    const inA = await projectA.conversations.create({ items: [{ type: 'message', role: 'user', content: 'kept' }] });
    const id = mine.output[0].id!;
    const notFound = (ref: string) => ({ error: { code: 'item_not_found', message: `Item with id '${ref}' not found.`, type: 'invalid_request_error', param: 'items' } });
    for (const [key, conv, who] of [[s.keyA, inA.id, 'unknown'], [s.keyB, inB.id, 'another project']] as const) {
      const ids = who === 'unknown' ? 'msg_nope' : id;
      const r = await call('POST', `/v1/conversations/${conv}/items`, { headers: keyHeader(key), json: { items: [{ type: 'message', role: 'user', content: 'x' }, { type: 'item_reference', id: ids }] } });
      expect([r.status, r.body], who).to.deep.equal([404, notFound(ids)]);
      const created = await call('POST', '/v1/conversations', { headers: keyHeader(key), json: { items: [{ id: ids }] } });
      expect([created.status, created.body], `${who}, at creation`).to.deep.equal([404, notFound(ids)]);
    }
    expectNotFoundIn(await outcome(otherOrg.conversations.items.create(theirs.id, { items: [ref(id)] })), id);
    for (const [c, conv] of [[projectA, inA.id], [projectB, inB.id], [otherOrg, theirs.id]] as const) {
      expect((await c.conversations.items.list(conv)).data.length, 'nothing was added').to.equal(conv === inA.id ? 1 : 0);
    }
    // a malformed reference is the same 400 as on POST /v1/responses, naming its place under items
    for (const bad of [{ type: 'item_reference' }, { type: 'item_reference', id: 5 }, { id: '' }]) {
      const r = await call('POST', `/v1/conversations/${inA.id}/items`, { headers: keyHeader(s.keyA), json: { items: [{ role: 'user', content: 'x' }, bad] } });
      expect([r.status, r.body.error.code, r.body.error.param], JSON.stringify(bad)).to.deep.equal([400, 'invalid_request', 'items[1].id']);
    }
    // another project's conversation is not found before any reference is looked up
    const hidden = await call('POST', `/v1/conversations/${inA.id}/items`, { headers: keyHeader(s.keyB), json: { items: [{ type: 'item_reference', id: 'msg_nope' }] } });
    expect([hidden.status, hidden.body.error.code]).to.deep.equal([404, 'conversation_not_found']);
  });

  it("the lookups read the indexes of migration 0045, not the org's rows, in an org with many stored responses and conversation items", async () => {
    const big = await buildOrg(env().redis);
    const r = { orgId: big.org.id };
    await db().query(
      `INSERT INTO stored_responses (id, org_id, model, conversation, response, input_items, created_at)
       SELECT 'resp_bulk' || g, :orgId, 'sim-chat', '[]', jsonb_build_object('output', jsonb_build_array(jsonb_build_object('id', 'msg_out' || g, 'type', 'message', 'role', 'assistant', 'content', 'out ' || g))),
              jsonb_build_array(jsonb_build_object('id', 'msg_in' || g, 'type', 'message', 'role', 'user', 'content', 'in ' || g)), now()
         FROM generate_series(1, 5000) g`,
      { replacements: r },
    );
    await db().query(`INSERT INTO conversations (org_id, id) VALUES (:orgId, 'conv_bulk')`, { replacements: r });
    await db().query(
      `INSERT INTO conversation_items (org_id, conversation_id, id, item) SELECT :orgId, 'conv_bulk', 'msg_c' || g, jsonb_build_object('id', 'msg_c' || g, 'type', 'message', 'role', 'user', 'content', 'conv ' || g) FROM generate_series(1, 5000) g`,
      { replacements: r },
    );
    await db().query('ANALYZE stored_responses');
    await db().query('ANALYZE conversation_items');
    const plan = async (sql: string, replacements: Record<string, unknown>) =>
      (await db().query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, { replacements, type: QueryTypes.SELECT })).map((x) => x['QUERY PLAN']).join('\n');
    for (const projectId of [null, big.project.id]) {
      const scope = { orgId: big.org.id, projectId };
      const stored = await plan(storedItemsSql(scope, true), { orgId: big.org.id, projectId, ids: ['msg_out7', 'msg_in9'], cutoff: new Date(0) });
      expect(stored, stored).to.include('stored_responses_item_ids');
      const conv = await plan(conversationItemsSql(scope), { orgId: big.org.id, projectId, ids: ['msg_c7'] });
      expect(conv, conv).to.include('conversation_items_item_id');
    }
    // and they find what the rows hold (rows written straight to the table, as ones stored before the migration)
    const bulk = new OpenAI({ apiKey: big.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const answer = await bulk.responses.create({ model: 'sim-chat', input: [ref('msg_in9'), ref('msg_c7'), { role: 'user', content: 'x' }] });
    expect(answer.status).to.equal('completed');
    expect(sentMessages()).to.deep.equal([
      { role: 'user', content: 'in 9' },
      { role: 'user', content: 'conv 7' },
      { role: 'user', content: 'x' },
    ]);
  });
});
