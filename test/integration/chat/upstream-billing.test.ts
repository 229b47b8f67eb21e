import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';

const msgs = [{ role: 'user', content: 'out of credit' }];
const OWN_KEY = 'sk-ant-callers-own-key';

async function billed(orgId: string): Promise<number> {
  await usageSettled();
  return UsageEvent.count({ where: { orgId } });
}

/**
 * An Anthropic upstream's 402 `billing_error` (docs.claude.com/en/api/errors; @anthropic-ai/sdk's
 * PaymentRequiredError): the account behind the key cannot pay. The simulator answers it in
 * Anthropic's own error shape.
 */
describe("an upstream's 402 billing_error: the caller's own key gets it as the vendor's refusal, the platform's credential a 502", () => {
  let o: TestOrg;
  beforeEach(async () => {
    await resetSim();
    env().sim.knobs.set('sim-claude-1', { status: 402 });
  });
  before(async () => {
    o = await buildOrg(env().redis);
  });

  it('on the caller\'s own key (passthrough): 402 upstream_billing_error, OpenAI\'s insufficient_quota type, the upstream\'s message, chat and legacy completions, JSON and streamed, unbilled', async () => {
    const before = await billed(o.org.id);
    for (const [path, json] of [
      ['/v1/chat/completions', { model: 'sim-claude', messages: msgs }],
      ['/v1/chat/completions', { model: 'sim-claude', messages: msgs, stream: true }],
      ['/v1/completions', { model: 'sim-claude', prompt: 'x', max_tokens: 8 }],
    ] as const) {
      const r = await call('POST', path, { headers: { ...keyHeader(o.key), authorization: `Bearer ${OWN_KEY}` }, json });
      const what = `${path} ${JSON.stringify(json)}: ${r.text}`;
      expect(r.status, what).to.equal(402);
      expect(r.headers.get('content-type'), what).to.match(/^application\/json/);
      expect(r.body, what).to.deep.equal({ error: { code: 'upstream_billing_error', message: r.body.error.message, type: 'insufficient_quota', param: null } });
      expect(r.body.error.message, what).to.include('simulated status 402');
    }
    // the caller's key reached the upstream, as Anthropic's x-api-key
    expect(env().sim.log.entries.map((e) => e.path)).to.deep.equal(['/v1/messages', '/v1/messages', '/v1/messages']);
    expect(await billed(o.org.id)).to.equal(before);
  });

  it('the official OpenAI client with its own key sees a 402 APIError of type insufficient_quota', async () => {
    const openai = new OpenAI({ apiKey: OWN_KEY, baseURL: `${env().gw.url}/v1`, maxRetries: 0, defaultHeaders: keyHeader(o.key) });
    const err = await openai.chat.completions.create({ model: 'sim-claude', messages: [{ role: 'user', content: 'hi' }] }).then(
      () => expect.fail('answered'),
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(OpenAI.APIError);
    const e = err as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).to.equal(402);
    expect(e.code).to.equal('upstream_billing_error');
    expect(e.type).to.equal('insufficient_quota');
  });

  it("on the platform's credential: 502 upstream_error without the upstream's words (the operator's account), in every dialect, unbilled", async () => {
    const before = await billed(o.org.id);
    for (const [path, json] of [
      ['/v1/chat/completions', { model: 'sim-claude', messages: msgs }],
      ['/v1/completions', { model: 'sim-claude', prompt: 'x', max_tokens: 8 }],
    ] as const) {
      const r = await call('POST', path, { headers: keyHeader(o.key), json });
      expect(r.status, r.text).to.equal(502);
      expect(r.body.error).to.include({ code: 'upstream_error', type: 'server_error' });
      expect(r.body.error.message).to.include('billing').and.not.include('simulated status');
    }
    const anthropic = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
    const err = await anthropic.messages.create({ model: 'sim-claude', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }).then(
      () => expect.fail('answered'),
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(Anthropic.InternalServerError);
    const e = err as InstanceType<typeof Anthropic.APIError>;
    expect(e.status).to.equal(502);
    expect((e.error as { error: { type: string; message: string } }).error).to.include({ type: 'api_error' });
    expect(e.message).not.to.include('simulated status');
    expect(await billed(o.org.id)).to.equal(before);
  });
});
