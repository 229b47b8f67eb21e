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
 * messages alone, its history lost unsaid. It is refused there as the other native-only fields are
 * (`container`, `mcp_servers`): 400 `unsupported_parameter` naming `thread`, JSON and streamed, nothing
 * sent or billed. `{type: 'create'}` and null are served (nothing held changes this turn's answer).
 */
describe('messages dialect: a continued thread on a translated upstream', function () {
  this.timeout(30_000);
  const { s, headers } = everyUpstreamKind();
  const TRANSLATED = ['sim-chat', 'test-gemini', 'sim-bedrock-claude'];
  const body = (model: string, extra: Record<string, unknown>) => ({ model, max_tokens: 20, messages: [{ role: 'user', content: 'and then?' }], ...extra });
  const CONTINUE = { thread: { type: 'continue', previous_message_id: 'msg_01previous' } };
  const REFUSED = "`thread` of type 'continue' (a server-held conversation) needs an Anthropic-native upstream; this model holds no thread: send the whole conversation in `messages`, without `thread`.";

  for (const model of TRANSLATED) {
    it(`${model}: thread continue is 400 unsupported_parameter naming thread, JSON and streamed, nothing sent or billed`, async () => {
      const before = await billedEvents(s.o.org.id);
      for (const stream of [false, true]) {
        const r = await call('POST', '/v1/messages', { headers: headers(), json: body(model, { ...CONTINUE, stream }) });
        expect(r.status, `stream=${stream} ${r.text}`).to.equal(400);
        // Anthropic's envelope names no param: the message names the field
        expect(r.body.error).to.deep.equal({ type: 'invalid_request_error', code: 'unsupported_parameter', message: REFUSED });
      }
      expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
      expect(await billedEvents(s.o.org.id), 'nothing billed').to.equal(before);
    });
  }

  it('the official client gets a BadRequestError; a tool result opening the continued thread is refused the same', async () => {
    const client = new Anthropic({ apiKey: s.o.key, baseURL: env().gw.url, maxRetries: 0 });
    const opening = [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_held', content: '42' }] }];
    const err = await client.beta.messages.create({ model: 'sim-chat', max_tokens: 20, messages: opening, ...CONTINUE } as never).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).error).to.deep.nested.include({ 'error.code': 'unsupported_parameter', 'error.message': REFUSED });
    expect(env().sim.log.entries).to.have.length(0);
  });

  it('thread create and null are served on a translated upstream, the thread not sent', async () => {
    for (const thread of [{ type: 'create' }, null]) {
      const r = await call('POST', '/v1/messages', { headers: headers(), json: body('sim-chat', { thread }) });
      expect(r.status, `${JSON.stringify(thread)} ${r.text}`).to.equal(200);
      expect(r.body.type).to.equal('message');
      expect(env().sim.log.entries.at(-1)!.body).to.not.have.property('thread');
    }
  });
});
