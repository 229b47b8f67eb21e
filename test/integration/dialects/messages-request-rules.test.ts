import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';

/**
 * Request fields Anthropic refuses in its own words, refused the same way by the gateway on the
 * translated (sim-chat) and the native (sim-claude) upstream, JSON and streamed, before any upstream
 * (api/routes/messages/schema.ts); driven with the official SDK, which throws BadRequestError.
 */
describe('messages: request fields Anthropic refuses', function () {
  this.timeout(30_000);
  const s = openaiOrg();
  let client: Anthropic;
  before(() => {
    client = new Anthropic({ apiKey: s.o.key, baseURL: env().gw.url, maxRetries: 0 });
  });

  const refusal = async (params: Record<string, unknown>) => {
    const e = await client.messages.create(params as never).catch((err: unknown) => err);
    expect(e, JSON.stringify(params)).to.be.instanceOf(Anthropic.BadRequestError);
    return (e as InstanceType<typeof Anthropic.BadRequestError>).error as { error: { type: string; message: string } };
  };

  it("refuses a stop sequence with no non-whitespace character ('stop_sequences: each stop sequence must contain non-whitespace'); others pass", async () => {
    for (const model of ['sim-chat', 'sim-claude']) {
      for (const stop of [' ', '\n', '']) {
        for (const stream of [false, true]) {
          const e = await refusal({ model, max_tokens: 50, stream, stop_sequences: ['END', stop], messages: [{ role: 'user', content: 'hi' }] });
          expect(e.error).to.include({ type: 'invalid_request_error', message: 'stop_sequences: each stop sequence must contain non-whitespace' });
        }
      }
    }
    expect(env().sim.log.entries).to.have.length(0);
    const m = await client.messages.create({ model: 'sim-chat', max_tokens: 50, stop_sequences: ['\n\nHuman:', ' END '], messages: [{ role: 'user', content: 'hi' }] });
    expect(m.stop_reason).to.be.oneOf(['end_turn', 'stop_sequence']);
  });
});
