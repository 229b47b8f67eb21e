import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { env } from '../../helpers/harness';
import { keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { billedRows, budgetedOrg, settledAt, TIER_PRICES, tieredModels } from '../../helpers/priced-chat';
import { expectAnthropic, expectOpenAI, expectResponsesEvent, responsesEventForDocument, withoutNullUser } from '../../helpers/conformance';

const { LIST, PRIORITY, FLEX } = TIER_PRICES;
type Price = typeof LIST;

/** The events of a streamed Response that carry the Response (OpenAI's document: ResponseCreatedEvent, ResponseInProgressEvent, ResponseCompletedEvent). */
const WITH_RESPONSE = ['response.created', 'response.in_progress', 'response.completed'];

/**
 * The tier an OpenAI-compatible upstream reports serving a request on, told to a caller of the
 * Responses and Messages dialects (api/dialects/served-tier.ts), who is billed at it when the model
 * prices it (docs/catalog.md "Service tiers"): a Response's `service_tier` (JSON, and the Response of
 * response.created, response.in_progress and response.completed: OpenAI's Response.service_tier, "the
 * processing mode actually used"), a Message's `usage.service_tier` (JSON and message_start: Anthropic's
 * `standard`, `priority` or `batch`; OpenAI's flex, billed at its Batch rates, is `batch`). Neither
 * dialect sends a tier upstream; the simulator's `projectTier` knob stands for the operator's OpenAI
 * project configured on a tier. Without one the answers keep `default` and `standard`.
 */
describe('responses and messages dialects: the tier the upstream served', function () {
  this.timeout(30_000);
  const m = tieredModels();

  const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: env().gw.url, maxRetries: 0 });
  const messagesHeaders = (key: string) => Object.assign(keyHeader(key), { 'anthropic-version': '2023-06-01' });

  /** Each request billed at `price` (request log), and the key's budget settled at their sum. */
  async function billedAt(o: { org: { id: string }; keyId: string }, rids: Array<string | null>, price: Price): Promise<void> {
    let total = 0;
    for (const rid of rids) {
      const { event, log } = await billedRows(rid!);
      const at = Number(event.input_tokens) * price.input_token + Number(event.output_tokens) * price.output_token;
      expect(Number(log.cost_micros), `${rid} billed`).to.equal(at);
      total += at;
    }
    await settledAt(o, total);
  }

  /** A Responses request JSON (the SDK's), streamed (the SDK's events) and streamed raw: each Response's `service_tier` is `tier`; billed at `price`. */
  async function responsesServed(model: string, tier: string, price: Price): Promise<void> {
    const o = await budgetedOrg();
    const c = openai(o.key);
    const { data: r, response: rRes } = await c.responses.create({ model, input: 'hello there' }).withResponse();
    expect(r.service_tier).to.equal(tier);
    expectOpenAI('Response', withoutNullUser(JSON.parse(JSON.stringify(r))));
    // stored as answered
    expect((await c.responses.retrieve(r.id)).service_tier, 'retrieved').to.equal(tier);

    const { data: stream, response: sRes } = await c.responses.create({ model, input: 'hello there', stream: true }).withResponse();
    const tiers: Record<string, unknown> = {};
    let id = '';
    for await (const ev of stream) {
      if ('response' in ev && WITH_RESPONSE.includes(ev.type)) [tiers[ev.type], id] = [ev.response.service_tier, ev.response.id];
    }
    expect(tiers).to.deep.equal(Object.fromEntries(WITH_RESPONSE.map((t) => [t, tier])));
    expect((await c.responses.retrieve(id)).service_tier, 'the streamed one retrieved').to.equal(tier);

    const raw = await postSse('/v1/responses', keyHeader(o.key), { model, input: 'hello there', stream: true });
    expect(raw.status, raw.text).to.equal(200);
    for (const e of raw.events) {
      expectResponsesEvent(responsesEventForDocument(e.data));
      if (WITH_RESPONSE.includes(e.data.type)) expect(e.data.response.service_tier, e.data.type).to.equal(tier);
    }
    await billedAt(o, [rRes.headers.get('x-service-request-id'), sRes.headers.get('x-service-request-id'), raw.headers.get('x-service-request-id')], price);
  }

  /** A Messages request JSON (the SDK's), streamed (the SDK's accumulated message) and streamed raw (message_start): `usage.service_tier` is `tier`; billed at `price`. */
  async function messagesServed(model: string, tier: string, price: Price): Promise<void> {
    const o = await budgetedOrg();
    const c = anthropic(o.key);
    const params = { model, max_tokens: 100, messages: [{ role: 'user' as const, content: 'hello there' }] };
    const { data: m, response: mRes } = await c.messages.create(params).withResponse();
    expect(m.usage.service_tier).to.equal(tier);
    expectAnthropic('Message', m);

    const s = c.messages.stream(params);
    const final = await s.finalMessage();
    expect(final.usage.service_tier).to.equal(tier);

    const raw = await postSse('/v1/messages', messagesHeaders(o.key), Object.assign({ stream: true }, params));
    expect(raw.status, raw.text).to.equal(200);
    for (const e of raw.events) expectAnthropic('StreamEvent', e.data);
    expect(raw.events.find((e) => e.event === 'message_start')!.data.message.usage.service_tier).to.equal(tier);
    const { response: sRes } = await s.withResponse();
    await billedAt(o, [mRes.headers.get('x-service-request-id'), raw.headers.get('x-service-request-id'), sRes.headers.get('x-service-request-id')], price);
  }

  it('Responses: served on a priced priority or flex it says so (JSON, and response.created, in_progress and completed), billed at its price', async () => {
    for (const [projectTier, price] of [['priority', PRIORITY], ['flex', FLEX]] as const) {
      env().sim.knobs.set(m.tieredUp, { projectTier });
      await responsesServed(m.tiered, projectTier, price);
    }
  });

  it('Responses: a tier the model does not price is reported as served, billed at the list price; no tier reported is `default`', async () => {
    env().sim.knobs.set(m.plainUp, { projectTier: 'scale' });
    await responsesServed(m.plain, 'scale', LIST);
    env().sim.knobs.reset();
    await responsesServed(m.tiered, 'default', LIST);
  });

  it("Messages: priority is Anthropic's priority, flex its batch, billed at their prices (JSON, message_start, the SDK's accumulated stream)", async () => {
    for (const [projectTier, tier, price] of [['priority', 'priority', PRIORITY], ['flex', 'batch', FLEX]] as const) {
      env().sim.knobs.set(m.tieredUp, { projectTier });
      await messagesServed(m.tiered, tier, price);
    }
  });

  it('Messages: default, or no tier reported, is standard; scale (not priced) is priority, billed at the list price', async () => {
    env().sim.knobs.set(m.tieredUp, { projectTier: 'default' });
    await messagesServed(m.tiered, 'standard', LIST);
    env().sim.knobs.reset();
    await messagesServed(m.tiered, 'standard', LIST);
    env().sim.knobs.set(m.plainUp, { projectTier: 'scale' });
    await messagesServed(m.plain, 'priority', LIST);
  });
});
