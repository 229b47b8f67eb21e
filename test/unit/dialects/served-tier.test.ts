import { expect } from 'chai';
import { anthropicServedTier, responsesServedTier } from '../../../api/dialects/served-tier';
import { ResponsesStreamTranslator } from '../../../api/dialects/responses/stream';
import { MessagesStreamTranslator } from '../../../api/dialects/messages/stream';
import type { ResponseFrame } from '../../../api/dialects/responses/response';

const frame = (): ResponseFrame => ({ id: 'resp_1', createdAt: 1741476542, publicModel: 'pub', req: { model: 'pub', input: 'x' } });

/** The tier an upstream reports served, as the Responses and Messages dialects report it (api/dialects/served-tier.ts). */
describe('dialects: the served tier reported', () => {
  it("Responses: one of OpenAI's served tiers as reported (fast as priority), anything else default", () => {
    for (const t of ['default', 'flex', 'scale', 'priority', 'ultrafast']) expect(responsesServedTier(t)).to.equal(t);
    expect(responsesServedTier('fast')).to.equal('priority');
    for (const t of [undefined, null, 'auto', 'turbo', 'constructor', '__proto__', 5, {}]) expect(responsesServedTier(t), String(t)).to.equal('default');
  });

  it("Messages: Anthropic's three tiers, priority for OpenAI's premium ones, batch for flex, standard otherwise", () => {
    for (const t of ['priority', 'fast', 'scale', 'ultrafast']) expect(anthropicServedTier(t), t).to.equal('priority');
    expect(anthropicServedTier('flex')).to.equal('batch');
    for (const t of ['default', 'auto', undefined, null, 'standard', 'turbo', 'constructor', 7]) expect(anthropicServedTier(t), String(t)).to.equal('standard');
  });

  it("streams: the first chunk's tier opens the stream (response.created, in_progress; message_start) and the Response ends with it", () => {
    const r = new ResponsesStreamTranslator(frame());
    const opening = r.push({ service_tier: 'priority', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' } }] });
    const tiers = (evs: Array<Record<string, unknown>>) => evs.filter((e) => e.response).map((e) => [e.type, (e.response as { service_tier: string }).service_tier]);
    expect(tiers(opening)).to.deep.equal([['response.created', 'priority'], ['response.in_progress', 'priority']]);
    r.push({ service_tier: 'flex', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    expect(tiers(r.end())).to.deep.equal([['response.completed', 'priority']]);

    const m = new MessagesStreamTranslator('pub');
    const start = m.push({ service_tier: 'flex', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' } }] })[0] as unknown as { message: { usage: { service_tier: string } } };
    expect(start.message.usage.service_tier).to.equal('batch');
    const plain = new MessagesStreamTranslator('pub').push({ choices: [{ index: 0, delta: { content: 'Hi' } }] })[0] as unknown as { message: { usage: { service_tier: string } } };
    expect(plain.message.usage.service_tier).to.equal('standard');
  });
});
