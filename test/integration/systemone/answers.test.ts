import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { UsageEvent } from '../../../shared/db/models';
import { decide, makeImages, requestIdOf, sumOf, validBody, type Images } from './helpers';
import { usageSettled } from '../../helpers/usage';

describe('POST /v1/systemone: answers', () => {
  let o: TestOrg;
  let img: Images;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis, { policies: { systemone: 'included' } });
    img = await makeImages();
  });

  it('answers every question type with well-typed answers keyed by the caller ids', async () => {
    const r = await decide(o.key, validBody());
    expect(r.status, r.text).to.equal(200);
    expect(Object.keys(r.body).sort()).to.deep.equal(['answers', 'latency_ms', 'model', 'usage']);
    expect(r.body.model).to.equal('sim-decide');
    expect(Object.keys(r.body.answers)).to.deep.equal(['paid', 'route/Ω 1', 'risk']);

    const paid = r.body.answers.paid;
    expect(Object.keys(paid).sort()).to.deep.equal(['noul', 'type']);
    expect(paid.type).to.equal('noul');
    expect(paid.noul).to.be.a('number').within(0, 1);
    expect(paid.noul).to.be.greaterThan(0.5); // the state says "paid in full"

    const route = r.body.answers['route/Ω 1'];
    expect(Object.keys(route).sort()).to.deep.equal(['choice', 'confidence', 'probabilities', 'type']);
    expect(route.choice).to.equal('billing');
    expect(Object.keys(route.probabilities)).to.deep.equal(['billing', 'shipping', 'legal']);
    expect(sumOf(route.probabilities)).to.be.closeTo(1, 1e-9);
    expect(route.confidence).to.equal(route.probabilities.billing);

    const risk = r.body.answers.risk;
    expect(Object.keys(risk).sort()).to.deep.equal(['confidence', 'legend', 'probabilities', 'score', 'type']);
    expect(risk.legend).to.deep.equal({ '0': 'no risk, signed and paid in full', '1': 'some risk, partly paid', '2': 'high risk, unsigned and unpaid' });
    expect(Object.keys(risk.probabilities)).to.deep.equal(['0', '1', '2']);
    expect(sumOf(risk.probabilities)).to.be.closeTo(1, 1e-9);
    expect(risk.score).to.be.a('number').within(0, 2);
    expect(risk.score).to.be.lessThan(1);
    expect(risk.confidence).to.equal(Math.max(...(Object.values(risk.probabilities) as number[])));

    expect(Number.isInteger(r.body.usage.input_tokens) && r.body.usage.input_tokens > 0).to.equal(true);
    expect(Number.isInteger(r.body.usage.output_tokens) && r.body.usage.output_tokens > 0).to.equal(true);
    expect(Number.isInteger(r.body.latency_ms)).to.equal(true);
  });

  it('makes one upstream chat call with the state sent once and structured output requested', async () => {
    const body = validBody();
    const r = await decide(o.key, body);
    expect(r.status, r.text).to.equal(200);
    const entries = env().sim.log.entries;
    expect(entries).to.have.length(1);
    expect(entries[0].path).to.equal('/v1/chat/completions');
    expect(entries[0].model).to.equal('sim-chat-1');
    const sent = JSON.stringify(entries[0].body);
    expect(sent.split('Acme lists 12 widgets').length - 1).to.equal(1);
    const upstream = entries[0].body as Record<string, any>;
    expect(upstream.response_format.type).to.equal('json_schema');
    expect(upstream.response_format.json_schema.strict).to.equal(true);
    expect(upstream.logprobs).to.equal(true);
    expect(sent).not.to.include('route/Ω 1'); // the model sees labels; the ids come back verbatim
  });

  it('records one usage event with modality decision', async () => {
    const r = await decide(o.key, validBody());
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { requestId: requestIdOf(r) } });
    expect(events).to.have.length(1);
    expect(events[0]).to.include({ orgId: o.org.id, model: 'sim-decide', modality: 'decision' });
    expect(events[0].inputTokens).to.equal(r.body.usage.input_tokens);
    expect(events[0].outputTokens).to.equal(r.body.usage.output_tokens);
    expect(events[0].units).to.deep.include({ questions: 3, images: 0, billed_micros: 0 });
  });

  it('calibrates noul from token log-probabilities, and falls back to the stated probability without them', async () => {
    const body = validBody({ questions: { q: { type: 'noul', instructions: 'Is the invoice signed by the customer?' } } });
    const withLp = await decide(o.key, body);
    expect(withLp.status, withLp.text).to.equal(200);
    env().sim.knobs.set('sim-chat-1', { noLogprobs: true });
    const without = await decide(o.key, body);
    expect(without.status, without.text).to.equal(200);
    const precise = withLp.body.answers.q.noul;
    const stated = without.body.answers.q.noul;
    expect(Math.round(stated * 10) / 10).to.equal(stated); // the verbalised probability is coarse
    expect(Math.round(precise * 10) / 10).not.to.equal(precise); // the log-probability one is not
    expect(Math.abs(precise - stated)).to.be.at.most(0.05);
  });

  it('answers deterministically from the content: different states give different choices', async () => {
    const q = { route: { type: 'choice', instructions: 'Which team?', criteria: { billing: 'invoice dollars paid', shipping: 'parcel courier tracking' } } };
    const a = await decide(o.key, { model: 'sim-decide', state: 'The parcel is with the courier; tracking shows it in transit.', questions: q });
    const b = await decide(o.key, { model: 'sim-decide', state: 'The parcel is with the courier; tracking shows it in transit.', questions: q });
    const c = await decide(o.key, { model: 'sim-decide', state: { invoice: 'paid', dollars: 480 }, questions: q });
    expect(a.body.answers.route).to.deep.equal(b.body.answers.route);
    expect(a.body.answers.route.choice).to.equal('shipping');
    expect(c.body.answers.route.choice).to.equal('billing');
  });

  it('echoes awkward question ids verbatim (__proto__, constructor, empty-looking and unicode ids)', async () => {
    const raw = '{"model":"sim-decide","state":"paid invoice","questions":{"__proto__":{"type":"noul","instructions":"paid?"},"constructor":{"type":"noul","instructions":"paid?"},"  ":{"type":"noul","instructions":"paid?"},"日本":{"type":"noul","instructions":"paid?"}}}';
    const r = await call('POST', '/v1/systemone', { headers: { ...keyHeader(o.key), 'content-type': 'application/json' }, raw });
    expect(r.status, r.text).to.equal(200);
    const keys = Object.keys(JSON.parse(r.text).answers);
    expect(keys).to.deep.equal(['__proto__', 'constructor', '  ', '日本']);
  });

  it('accepts a JSON array state and a structured instructions object', async () => {
    const r = await decide(o.key, {
      model: 'sim-decide',
      state: [{ item: 'widget', paid: true }],
      questions: { x: { type: 'score', instructions: { task: 'rate', scale: 'quality' }, criteria: ['bad', { label: 'good', note: 'widget paid' }] } },
    });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.answers.x.legend).to.deep.equal({ '0': 'bad', '1': { label: 'good', note: 'widget paid' } });
    expect(sumOf(r.body.answers.x.probabilities)).to.be.closeTo(1, 1e-9);
  });

  it('accepts image options three levels deep in instructions, choice criteria and noul true/false, plus a state image', async () => {
    const deep = (image: string) => ({ a: { b: { c: { image, text: 'look' } } } });
    const r = await decide(o.key, {
      model: 'sim-decide',
      state: 'A red square photo of an invoice.',
      images: [img.png],
      questions: {
        i: { type: 'noul', instructions: deep(img.jpeg), criteria: { true: [deep(img.webp)], false: deep(img.png) } },
        c: { type: 'choice', instructions: 'Which colour?', criteria: { red: deep(img.png), blue: 'blue square' } },
      },
    });
    expect(r.status, r.text).to.equal(200);
    const upstream = env().sim.log.entries[0].body as { messages: Array<{ content: unknown }> };
    const parts = upstream.messages[1].content as Array<{ type: string; image_url?: { url: string } }>;
    const imageParts = parts.filter((p) => p.type === 'image_url');
    expect(imageParts).to.have.length(5);
    expect(imageParts[0].image_url!.url).to.equal(img.png);
    expect(r.body.answers.c.choice).to.equal('red');
    await usageSettled();
    const ev = await UsageEvent.findOne({ where: { requestId: requestIdOf(r) } });
    expect(ev!.units).to.deep.include({ images: 5 });
  });

  it('lists decision models in GET /v1/models and has no /v1/systemone/models', async () => {
    const list = await call('GET', '/v1/models', { headers: keyHeader(o.key) });
    const entry = list.body.data.find((m: { id: string }) => m.id === 'sim-decide');
    expect(entry.capabilities.decision).to.equal(true);
    expect(entry.compatibility.systemone).to.equal(true);
    expect(entry.limits).to.include({ max_state_bytes: 262_144, max_questions: 64, max_input_tokens: 100_000 });
    const anthropicShape = await call('GET', '/v1/models/sim-decide', { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' } });
    expect(anthropicShape.body.limits.max_state_bytes).to.equal(262_144);
    const mini = list.body.data.find((m: { id: string }) => m.id === 'sim-decide-mini');
    expect(mini.capabilities).to.include({ decision: true, vision: false });
    const none = await call('GET', '/v1/systemone/models', { headers: keyHeader(o.key) });
    expect(none.status).to.equal(404);
  });

  it('refuses decision ids on the chat, messages and responses routes', async () => {
    const chat = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-decide', messages: [{ role: 'user', content: 'hi' }] } });
    // OpenAI's 404 for a model that is not a chat model (docs/api.md)
    expect(chat.status).to.equal(404);
    expect(chat.body.error.code).to.equal('model_not_chat_capable');
    const messages = await call('POST', '/v1/messages', {
      headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' },
      json: { model: 'sim-decide', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(messages.status).to.equal(400);
    expect(messages.body.error.code).to.equal('model_not_chat_capable');
    const responses = await call('POST', '/v1/responses', { headers: keyHeader(o.key), json: { model: 'sim-decide', input: 'hi' } });
    expect(responses.status).to.equal(400);
    expect(responses.body.error.code).to.equal('model_not_chat_capable');
    expect(env().sim.log.entries).to.have.length(0);
  });
});
