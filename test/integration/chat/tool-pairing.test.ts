import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { expectOpenAI } from '../../helpers/conformance';
import { outcome } from '../../helpers/responses-background';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';

const MISSING = "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ";
const ORPHAN = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
const fn = { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } };
const callOf = (id: string) => ({ id, type: 'function', function: { name: 'lookup', arguments: '{}' } });
const user = { role: 'user', content: 'look it up' };
const asked = (...ids: string[]) => ({ role: 'assistant', content: null, tool_calls: ids.map(callOf) });
const answer = (id: string) => ({ role: 'tool', tool_call_id: id, content: 'found' });

/**
 * Chat tool calls and tool messages that do not pair up (api/routes/chat/tool-pairing.ts): OpenAI's
 * 400 invalid_request_error with its param `messages.[N].role` and words, on the native (sim-chat)
 * and the translated (sim-claude) upstream, JSON and streamed, before any upstream, nothing billed;
 * paired conversations (answers in any order, a final assistant message with tool calls) still answer.
 */
describe('chat: tool calls and tool messages that do not pair up', function () {
  this.timeout(30_000);
  const s = openaiOrg();
  const post = (json: Record<string, unknown>) => call('POST', '/v1/chat/completions', { headers: keyHeader(s.o.key), json });

  function expectRefusal(r: Reply, param: string, message: string, what: string): void {
    expect(r.status, `${what} ${r.text}`).to.equal(400);
    expect(r.body.error, what).to.deep.equal({ code: 'invalid_request', message, type: 'invalid_request_error', param });
    expectOpenAI('ErrorResponse', r.body);
  }

  it("refuses each in OpenAI's words on every upstream kind, JSON and streamed; nothing sent or billed", async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: s.o.org.id } });
    const cases: Array<[unknown[], string, string]> = [
      // a call left unanswered: a user message comes first
      [[user, asked('call_a'), user], 'messages.[1].role', `${MISSING}call_a`],
      // two calls, one answered; the other is named
      [[user, asked('call_a', 'call_b'), answer('call_b'), user], 'messages.[1].role', `${MISSING}call_a`],
      // both unanswered, in the order they were called
      [[{ role: 'system', content: 's' }, user, asked('call_a', 'call_b'), { role: 'assistant', content: 'done' }, user], 'messages.[2].role', `${MISSING}call_a, call_b`],
      // an answer after a user message comes too late: the call was not answered right after it
      [[user, asked('call_a'), user, answer('call_a')], 'messages.[1].role', `${MISSING}call_a`],
      // a tool message answering nothing
      [[user, answer('call_a')], 'messages.[1].role', ORPHAN],
      [[answer('call_a'), user], 'messages.[0].role', ORPHAN],
      [[user, asked('call_a'), answer('call_a'), { role: 'assistant', content: 'ok' }, answer('call_a')], 'messages.[4].role', ORPHAN],
    ];
    for (const [messages, param, message] of cases) {
      for (const model of ['sim-chat', 'sim-claude']) {
        for (const stream of [false, true]) {
          expectRefusal(await post({ model, messages, tools: [fn], stream }), param, message, `${model} ${JSON.stringify(messages)} stream ${stream}`);
        }
      }
    }
    // the official SDK raises its BadRequestError with OpenAI's fields
    const err = await outcome(s.c.chat.completions.create({ model: 'sim-chat', messages: [user, asked('call_a'), user] as OpenAI.ChatCompletionMessageParam[], tools: [fn] as OpenAI.ChatCompletionTool[] }));
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err as InstanceType<typeof OpenAI.BadRequestError>).to.deep.include({ status: 400, type: 'invalid_request_error', param: 'messages.[1].role' });
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: s.o.org.id } }), 'nothing billed').to.equal(before);
  });

  it('answers paired conversations: answers in any order, several rounds, a final assistant message with tool calls', async () => {
    const bodies: unknown[][] = [
      [user, asked('call_a', 'call_b'), answer('call_b'), answer('call_a')],
      [user, asked('call_a'), answer('call_a'), { role: 'assistant', content: 'again' }, user, asked('call_c'), answer('call_c'), user],
      [user, asked('call_a')],
    ];
    for (const messages of bodies) {
      for (const model of ['sim-chat', 'sim-claude']) {
        const r = await post({ model, messages, tools: [fn] });
        expect(r.status, `${model} ${JSON.stringify(messages)} ${r.text}`).to.equal(200);
      }
    }
    expect(env().sim.log.entries.length, 'each sent upstream').to.equal(bodies.length * 2);
  });
});
