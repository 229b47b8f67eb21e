import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env } from '../../helpers/harness';
import { call } from '../../helpers/http';
import { billedEvents } from '../../helpers/usage';
import { everyUpstreamKind } from '../../helpers/messages-every-upstream';

/**
 * `thread` (SDK 1.17 beta BetaMessageThreadParam): `{type: 'continue', previous_message_id}` resumes a
 * conversation the server holds, so only the new turn's messages are sent. A translated upstream
 * (OpenAI-compatible, Gemini, Bedrock) holds none: the field was dropped and the model answered the new
 * messages alone, its history lost unsaid. It is answered as Anthropic answers a thread it does not
 * hold, 404 `not_found_error` with `details.error_code` `thread_not_found`, JSON and streamed, nothing
 * sent or billed: the SDK's thread helper then sends the whole history again, so a threaded
 * conversation goes on. `{type: 'create'}` and null are served (nothing held changes this turn's answer).
 */
describe('messages dialect: a continued thread on a translated upstream', function () {
  this.timeout(30_000);
  const { s, headers } = everyUpstreamKind();
  const TRANSLATED = ['sim-chat', 'test-gemini', 'sim-bedrock-claude'];
  const body = (model: string, extra: Record<string, unknown>) => ({ model, max_tokens: 20, messages: [{ role: 'user', content: 'and then?' }], ...extra });
  const CONTINUE = { thread: { type: 'continue', previous_message_id: 'msg_01previous' } };
  const REFUSED = "thread.previous_message_id: message 'msg_01previous' not found. This model holds no thread (its upstream is not Anthropic-native). Send the whole conversation in messages (a new thread: thread {type: 'create'}, or none).";

  for (const model of TRANSLATED) {
    it(`${model}: thread continue is 404 thread_not_found, JSON and streamed, nothing sent or billed`, async () => {
      const before = await billedEvents(s.o.org.id);
      for (const stream of [false, true]) {
        const r = await call('POST', '/v1/messages', { headers: headers(), json: body(model, { ...CONTINUE, stream }) });
        expect(r.status, `stream=${stream} ${r.text}`).to.equal(404);
        // Anthropic's envelope names no param: the message names the field
        expect(r.body.error).to.deep.equal({ type: 'not_found_error', code: 'thread_not_found', message: REFUSED, details: { error_code: 'thread_not_found' } });
      }
      expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
      expect(await billedEvents(s.o.org.id), 'nothing billed').to.equal(before);
    });
  }

  it("the official client gets its NotFoundError with error code thread_not_found; a tool result opening the continued thread is refused the same", async () => {
    const client = new Anthropic({ apiKey: s.o.key, baseURL: env().gw.url, maxRetries: 0 });
    const opening = [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_held', content: '42' }] }];
    const err = await client.beta.messages.create({ model: 'sim-chat', max_tokens: 20, messages: opening, ...CONTINUE } as never).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(Anthropic.NotFoundError);
    expect((err as InstanceType<typeof Anthropic.NotFoundError>).errorCode).to.equal('thread_not_found');
    expect((err as InstanceType<typeof Anthropic.NotFoundError>).error).to.deep.nested.include({ 'error.code': 'thread_not_found', 'error.message': REFUSED });
    expect(env().sim.log.entries).to.have.length(0);
  });

  for (const model of ['sim-chat', 'test-gemini']) {
    it(`${model}: the SDK's thread helper (client.beta.messages.thread) holds a conversation over turns: each continue is not found, and the helper sends the whole history again`, async () => {
      const client = new Anthropic({ apiKey: s.o.key, baseURL: env().gw.url, maxRetries: 0 });
      const thread = client.beta.messages.thread({ model, max_tokens: 20 });
      const first = await thread.send({ role: 'user', content: 'first turn' });
      expect(first.type).to.equal('message');
      const second = await thread.send({ role: 'user', content: 'second turn' });
      expect(second.type).to.equal('message');
      const third = await thread.stream({ role: 'user', content: 'third turn' }).finalMessage();
      expect(third.type).to.equal('message');
      // what reached the upstream: each turn with every earlier one (the refused continues reached nothing)
      const sentTurns = env().sim.log.entries.map((e) => JSON.stringify(e.body));
      expect(sentTurns).to.have.length(3);
      expect(sentTurns[1]).to.include('first turn').and.include('second turn');
      expect(sentTurns[2]).to.include('first turn').and.include('second turn').and.include('third turn');
      expect(thread.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    });
  }

  it('thread create and null are served on a translated upstream, the thread not sent', async () => {
    for (const thread of [{ type: 'create' }, null]) {
      const r = await call('POST', '/v1/messages', { headers: headers(), json: body('sim-chat', { thread }) });
      expect(r.status, `${JSON.stringify(thread)} ${r.text}`).to.equal(200);
      expect(r.body.type).to.equal('message');
      expect(env().sim.log.entries.at(-1)!.body).to.not.have.property('thread');
    }
  });
});
