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

  it("takes a body up to Anthropic's 32 MB (a 24 MB conversation of images is answered, as by Anthropic); past it, 413 request_too_large", async () => {
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'A'.repeat(4 * 1024 * 1024) } };
    const content = [...Array.from({ length: 6 }, () => image), { type: 'text', text: 'what differs?' }];
    const counted = await client.messages.countTokens({ model: 'sim-chat', messages: [{ role: 'user', content }] } as never);
    expect(counted.input_tokens).to.be.greaterThan(0);
    const answered = await client.messages.create({ model: 'sim-chat', max_tokens: 20, messages: [{ role: 'user', content }] } as never);
    expect(answered.type).to.equal('message');
    const huge = { model: 'sim-chat', max_tokens: 20, messages: [{ role: 'user', content: [...content, ...content.slice(0, 3)] }] };
    for (const create of [() => client.messages.create(huge as never), () => client.messages.countTokens(huge as never)]) {
      const e = await create().catch((err: unknown) => err);
      expect(e).to.be.instanceOf(Anthropic.APIError);
      expect((e as InstanceType<typeof Anthropic.APIError>).status).to.equal(413);
      expect((e as InstanceType<typeof Anthropic.APIError>).error).to.deep.include({ error: { code: 'payload_too_large', message: (e as { error: { error: { message: string } } }).error.error.message, type: 'request_too_large' } });
    }
  });
});
