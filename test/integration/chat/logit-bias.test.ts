import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader } from '../../helpers/http';
import { expectOpenAI } from '../../helpers/conformance';
import { outcome } from '../../helpers/responses-background';

const msgs = [{ role: 'user' as const, content: 'hello' }];
const badKey = (k: string) => `Invalid key in 'logit_bias': ${k}. You should only be submitting non-negative integers.`;
const badValue = (k: string) => `Invalid value in 'logit_bias' for token ${k}: expected a number from -100 to 100.`;

/**
 * `logit_bias` maps token ids to a bias from -100 to 100 (OpenAI's document). A key that is not a
 * token id is OpenAI's 400 in its words, a bias outside the range (or not a number) a 400 naming
 * the same field, on chat and legacy completions, every upstream kind, before any upstream; both
 * used to reach an OpenAI-compatible upstream as sent. Valid biases are sent as they came.
 */
describe('OpenAI refusals: logit_bias keys and values', function () {
  this.timeout(30_000);
  const s = openaiOrg();
  const post = (path: string, json: Record<string, unknown>) => call('POST', path, { headers: keyHeader(s.o.key), json });

  it("a key that is not a token id, or a bias outside -100..100, is 400 invalid_request naming logit_bias (chat and legacy completions, JSON and streamed, every upstream kind); nothing sent", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ AI: 10 }, badKey('AI')],
      [{ '-1': 1 }, badKey('-1')],
      [{ '1.5': 1 }, badKey('1.5')],
      [{ '50256': -101 }, badValue('50256')],
      [{ '7': 100.5 }, badValue('7')],
      [{ '7': '5' }, badValue('7')],
    ];
    for (const model of ['sim-chat', 'sim-claude']) {
      for (const [logit_bias, message] of cases) {
        for (const stream of [false, true]) {
          for (const [path, extra] of [['/v1/chat/completions', { messages: msgs }], ['/v1/completions', { prompt: 'x' }]] as const) {
            const what = `${path} ${model} ${JSON.stringify(logit_bias)} stream ${stream}`;
            const r = await post(path, { model, stream, logit_bias, ...extra });
            expect(r.status, `${what} ${r.text}`).to.equal(400);
            expect(r.body.error, what).to.deep.equal({ code: 'invalid_request', message, type: 'invalid_request_error', param: 'logit_bias' });
            expectOpenAI('ErrorResponse', r.body);
          }
        }
      }
    }
    const err = await outcome(s.c.chat.completions.create({ model: 'sim-chat', messages: msgs, logit_bias: { hello: 5 } }));
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err as InstanceType<typeof OpenAI.BadRequestError>).to.deep.include({ status: 400, type: 'invalid_request_error', param: 'logit_bias' });
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
  });

  it('token ids with biases from -100 to 100 (fractions too), an empty map and null still answer, sent as they came', async () => {
    const bias = { '50256': -100, '7': 100, '0': 0.5 };
    await s.c.chat.completions.create({ model: 'sim-chat', messages: msgs, logit_bias: bias });
    expect((env().sim.log.entries.at(-1)!.body as { logit_bias?: unknown }).logit_bias).to.deep.equal(bias);
    await s.c.completions.create({ model: 'sim-chat', prompt: 'x', logit_bias: bias });
    expect((env().sim.log.entries.at(-1)!.body as { logit_bias?: unknown }).logit_bias).to.deep.equal(bias);
    for (const logit_bias of [{}, null]) {
      const r = await post('/v1/chat/completions', { model: 'sim-claude', messages: msgs, logit_bias });
      expect(r.status, r.text).to.equal(200);
    }
  });
});
