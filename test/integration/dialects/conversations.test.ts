import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { lastSent, openaiOrg } from '../../helpers/openai-org';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { expectOpenAI, withoutNullUser } from '../../helpers/conformance';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';
import { ended, expectRefused, outcome } from '../../helpers/responses-background';

/** OpenAI's Conversations API, and responses made with `conversation`, through the official SDK. */
describe('conversations', () => {
  const s = openaiOrg();

  it('creates, retrieves, updates and deletes a conversation; its items are added, listed in pages either way, retrieved and deleted', async () => {
    const conv = await s.c.conversations.create({ metadata: { topic: 'otters' }, items: [{ type: 'message', role: 'user', content: 'first' }, { type: 'message', role: 'assistant', content: 'second' }] });
    expect(conv).to.deep.include({ object: 'conversation', metadata: { topic: 'otters' } });
    expect(conv.id).to.match(/^conv_/);
    expectOpenAI('ConversationResource', conv);
    expect(await s.c.conversations.retrieve(conv.id)).to.deep.equal(conv);
    const updated = await s.c.conversations.update(conv.id, { metadata: { topic: 'beavers' } });
    expect(updated).to.deep.include({ id: conv.id, metadata: { topic: 'beavers' } });

    const added = await s.c.conversations.items.create(conv.id, { items: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'third' }] }, { type: 'message', role: 'user', content: 'fourth' }] });
    expect(added.data.map((i) => i.type)).to.deep.equal(['message', 'message']);
    expectOpenAI('ConversationItemList', added);
    const texts = (items: OpenAI.Conversations.ConversationItem[]) => items.map((i) => ((i as OpenAI.Conversations.Message).content[0] as { text: string }).text);
    const desc = await s.c.conversations.items.list(conv.id);
    expect(texts(desc.data), 'newest first by default').to.deep.equal(['fourth', 'third', 'second', 'first']);
    expectOpenAI('ConversationItemList', JSON.parse(JSON.stringify({ object: 'list', data: desc.data, first_id: desc.data[0].id, last_id: desc.data.at(-1)!.id, has_more: false })));
    const all: string[] = [];
    for await (const item of s.c.conversations.items.list(conv.id, { order: 'asc', limit: 3 })) all.push(texts([item])[0]);
    expect(all, 'paged by the SDK, oldest first').to.deep.equal(['first', 'second', 'third', 'fourth']);

    const third = desc.data[1];
    expect(await s.c.conversations.items.retrieve(third.id!, { conversation_id: conv.id })).to.deep.equal(third);
    const after = await s.c.conversations.items.delete(third.id!, { conversation_id: conv.id });
    expect(after.id).to.equal(conv.id);
    expect(texts((await s.c.conversations.items.list(conv.id, { order: 'asc' })).data)).to.deep.equal(['first', 'second', 'fourth']);
    expect((await outcome(s.c.conversations.items.retrieve(third.id!, { conversation_id: conv.id })) as InstanceType<typeof OpenAI.APIError>).status).to.equal(404);

    const deleted = await s.c.conversations.delete(conv.id);
    expect(deleted).to.deep.include({ id: conv.id, object: 'conversation.deleted', deleted: true });
    expectOpenAI('DeletedConversationResource', deleted);
    expect((await outcome(s.c.conversations.retrieve(conv.id)) as InstanceType<typeof OpenAI.APIError>).status).to.equal(404);
  });

  it('shows added function calls and their outputs as OpenAI lists them: each with its status (FunctionToolCallResource, FunctionToolCallOutputResource)', async () => {
    const fresh = await buildOrg(env().redis);
    const f = new OpenAI({ apiKey: fresh.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const conv = await f.conversations.create({
      items: [
        { type: 'message', role: 'user', content: 'what is the weather?' },
        { type: 'function_call', call_id: 'call_w', name: 'weather', arguments: '{"city":"Oslo"}' },
        { type: 'function_call_output', call_id: 'call_w', output: 'rain' },
      ],
    });
    const added = await f.conversations.items.create(conv.id, { items: [{ type: 'function_call', call_id: 'call_x', name: 'weather', arguments: '{}', status: 'incomplete' }] });
    expectOpenAI('ConversationItemList', added);
    const raw = await call('GET', `/v1/conversations/${conv.id}/items?order=asc`, { headers: keyHeader(fresh.key) });
    // was: the call and its output listed without a status, which OpenAI's ConversationItem requires
    expectOpenAI('ConversationItemList', raw.body);
    expect(raw.body.data.map((i: { type: string; status: string }) => [i.type, i.status])).to.deep.equal([
      ['message', 'completed'],
      ['function_call', 'completed'],
      ['function_call_output', 'completed'],
      ['function_call', 'incomplete'],
    ]);
    const one = await f.conversations.items.retrieve(raw.body.data[2].id, { conversation_id: conv.id });
    expect(one).to.deep.include({ type: 'function_call_output', call_id: 'call_w', output: 'rain', status: 'completed' });
    // a response continues from them as before: the incomplete call_x has no output, and a conversation's open calls are not
    // refused (OpenAI's "No tool output found" was found confirmed for an input and a previous response, not for a conversation: call-pairing.ts)
    const r = await f.responses.create({ model: 'sim-chat', input: 'so?', conversation: conv.id });
    expect(r.status).to.equal('completed');
    expect(lastSent()).to.include('rain');
  });

  it('a response made with conversation continues its items and adds its input and output to it, JSON and streamed', async () => {
    const conv = await s.c.conversations.create({ items: [{ type: 'message', role: 'user', content: 'my favourite animal is the capybara' }] });
    const r1 = await s.c.responses.create({ model: 'sim-chat', input: 'what is my favourite animal?', conversation: conv.id });
    expect(r1.conversation).to.deep.equal({ id: conv.id });
    expectOpenAI('Response', withoutNullUser(JSON.parse(JSON.stringify(r1))));
    expect(lastSent(), 'the conversation’s item went upstream').to.include('capybara');
    const items = (await s.c.conversations.items.list(conv.id, { order: 'asc' })).data;
    expect(items.map((i) => [i.type, (i as OpenAI.Conversations.Message).role])).to.deep.equal([
      ['message', 'user'],
      ['message', 'user'],
      ['message', 'assistant'],
    ]);
    expect(items[2].id, 'the output item as the response has it').to.equal(r1.output[0].id);
    const inputItems = (await s.c.responses.inputItems.list(r1.id)).data;
    expect(items[1].id, "the input item as the response's input_items has it").to.equal(inputItems[0].id);

    const stream = await s.c.responses.create({ model: 'sim-chat', input: 'and the second turn?', conversation: { id: conv.id }, stream: true });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const ev of stream) if (ev.type === 'response.completed') completed = ev.response;
    expect(completed!.conversation).to.deep.equal({ id: conv.id });
    const sent = lastSent();
    expect(sent).to.include('capybara').and.to.include('what is my favourite animal?').and.to.include(r1.output_text.slice(0, 20));
    expect((await s.c.conversations.items.list(conv.id)).data, 'two more items').to.have.length(5);

    const bg = await s.c.responses.create({ model: 'sim-chat', input: 'a third turn, in the background', conversation: conv.id, background: true });
    expect((await ended(s.c, bg.id)).status).to.equal('completed');
    const latest = (await s.c.conversations.items.list(conv.id)).data;
    expect(latest, 'a background response adds its turn when it completes').to.have.length(7);
    expect(latest[1].id, "a background response's input item as its input_items has it").to.equal((await s.c.responses.inputItems.list(bg.id)).data[0].id);
    const counted = await s.c.responses.inputTokens.count({ model: 'sim-chat', input: 'x', conversation: conv.id });
    const bare = await s.c.responses.inputTokens.count({ model: 'sim-chat', input: 'x' });
    expect(counted.input_tokens, 'input_tokens counts the conversation’s items').to.be.above(bare.input_tokens + 20);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: s.o.org.id } }), 'three responses billed').to.equal(3);
  });

  it('refuses what it cannot serve, before anything is sent or billed: unknown or another org’s conversation 404, with previous_response_id 400, bad items, metadata and pages 400', async () => {
    const fresh = await buildOrg(env().redis);
    const f = new OpenAI({ apiKey: fresh.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const mine = await s.c.conversations.create({});
    const notFound = await outcome(f.responses.create({ model: 'sim-chat', input: 'x', conversation: mine.id }));
    expect([(notFound as InstanceType<typeof OpenAI.APIError>).status, (notFound as InstanceType<typeof OpenAI.APIError>).code]).to.deep.equal([404, 'conversation_not_found']);
    expect((await outcome(f.conversations.retrieve(mine.id)) as InstanceType<typeof OpenAI.APIError>).status, 'another org’s').to.equal(404);
    const own = await f.conversations.create({});
    const prev = await f.responses.create({ model: 'sim-chat', input: 'x' });
    const sentBefore = env().sim.log.entries.length;
    expectRefused(await outcome(f.responses.create({ model: 'sim-chat', input: 'x', conversation: own.id, previous_response_id: prev.id })), 400, 'conversation');
    expectRefused(await outcome(f.conversations.create({ items: Array.from({ length: 21 }, () => ({ type: 'message' as const, role: 'user' as const, content: 'x' })) })), 400, 'items');
    expectRefused(await outcome(f.conversations.create({ metadata: { k: 'v'.repeat(513) } })), 400, 'metadata');
    expectRefused(await outcome(f.conversations.items.create(own.id, { items: [] })), 400, 'items');
    const badType = await call('POST', `/v1/conversations/${own.id}/items`, { headers: keyHeader(fresh.key), json: { items: [{ type: 'computer_call', id: 'x' }] } });
    expect(badType.status, badType.text).to.equal(400);
    const twice = await call('POST', `/v1/conversations/${own.id}/items`, { headers: keyHeader(fresh.key), json: { items: [{ type: 'message', role: 'user', content: 'a', id: 'msg_same' }, { type: 'message', role: 'user', content: 'b', id: 'msg_same' }] } });
    expect([twice.status, twice.body.error.param]).to.deep.equal([400, 'items']);
    const once = { items: [{ type: 'message', role: 'user', content: 'once', id: 'msg_once' }] };
    expect((await call('POST', `/v1/conversations/${own.id}/items`, { headers: keyHeader(fresh.key), json: once })).status).to.equal(200);
    const again = await call('POST', `/v1/conversations/${own.id}/items`, { headers: keyHeader(fresh.key), json: once });
    expect([again.status, again.body.error.param, again.body.error.message]).to.deep.equal([400, 'items', "The conversation already has an item with id 'msg_once'."]);
    const missing = await call('POST', '/v1/conversations/conv_nope/items', { headers: keyHeader(fresh.key), json: once });
    expect([missing.status, missing.body.error.code]).to.deep.equal([404, 'conversation_not_found']);
    const noMeta = await call('POST', `/v1/conversations/${own.id}`, { headers: keyHeader(fresh.key), json: {} });
    expect([noMeta.status, noMeta.body.error.param]).to.deep.equal([400, 'metadata']);
    // a field the endpoint does not take is refused, naming it, as OpenAI refuses it (it was dropped silently)
    for (const [path, json, param] of [
      [`/v1/conversations/${own.id}`, { metadata: { a: 'b' }, items: [{ type: 'message', role: 'user', content: 'lost' }] }, 'items'],
      ['/v1/conversations', { metadata: null, title: 'x' }, 'title'],
      [`/v1/conversations/${own.id}/items`, { items: once.items, metadata: { a: 'b' } }, 'metadata'],
    ] as const) {
      const r = await call('POST', path, { headers: keyHeader(fresh.key), json });
      expect([r.status, r.body.error.code, r.body.error.param], path).to.deep.equal([400, 'invalid_request', param]);
    }
    expect((await f.conversations.retrieve(own.id)).metadata, 'the update with a stray field changed nothing').to.not.deep.include({ a: 'b' });
    const order = await call('GET', `/v1/conversations/${own.id}/items?order=sideways`, { headers: keyHeader(fresh.key) });
    expect([order.status, order.body.error.param]).to.deep.equal([400, 'order']);
    expect((await f.conversations.items.list(own.id)).data.map((i) => i.id), 'nothing was added but the one item').to.deep.equal(['msg_once']);
    expect(env().sim.log.entries.length, 'nothing sent').to.equal(sentBefore);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: fresh.org.id } }), 'only the plain response billed').to.equal(1);
  });
});
