import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { upsertModel } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { credit } from '../../../shared/billing/wallet';
import { call, keyHeader } from '../../helpers/http';
import { decide, expectRefused, makeImages, validBody, walletOf, type Images } from './helpers';

type Body = Record<string, any>;
interface Row {
  name: string;
  body: (img: Images) => Body;
  status: number;
  code: string;
  message?: RegExp;
}

const INVALID = 'systemone_invalid_request';
/** Wraps a value three levels deep. */
const deep3 = (v: unknown) => ({ a: { b: { c: v } } });
const q = (question: Body) => validBody({ questions: { only: question } });
const noul = (extra: Body = {}) => ({ type: 'noul', instructions: 'Is it paid?', ...extra });
const choice = (criteria: unknown, extra: Body = {}) => ({ type: 'choice', instructions: 'Pick one.', criteria, ...extra });
const score = (criteria: unknown) => ({ type: 'score', instructions: 'Rate it.', criteria });
const without = (key: string) => {
  const b = validBody();
  delete b[key];
  return b;
};
const opts = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`o${i}`, `option ${i}`]));

/** Every rule's violating request. Image options are nested three levels deep in every place. */
const ROWS: Row[] = [
  // shape of the request
  { name: 'missing model', body: () => without('model'), status: 400, code: INVALID },
  { name: 'model not a string', body: () => validBody({ model: 7 }), status: 400, code: INVALID },
  { name: 'missing state', body: () => without('state'), status: 400, code: INVALID },
  { name: 'state a number', body: () => validBody({ state: 42 }), status: 400, code: INVALID },
  { name: 'state null', body: () => validBody({ state: null }), status: 400, code: INVALID },
  { name: 'state a boolean', body: () => validBody({ state: true }), status: 400, code: INVALID },
  { name: 'missing questions', body: () => without('questions'), status: 400, code: INVALID },
  { name: 'questions empty', body: () => validBody({ questions: {} }), status: 400, code: INVALID },
  { name: 'questions an array', body: () => validBody({ questions: [noul()] }), status: 400, code: INVALID },
  { name: 'question id over 256 characters', body: () => validBody({ questions: { ['x'.repeat(257)]: noul() } }), status: 400, code: INVALID },
  { name: 'a malformed question under the id __proto__', body: () => validBody({ questions: { ['__proto__']: { type: 'bogus', instructions: 'x' } } }), status: 400, code: INVALID },
  // JSON.parse makes "__proto__" an own key and Joi skips such keys: each of these reached the handler unchecked (500).
  { name: 'a null question under the id __proto__', body: () => validBody({ questions: { only: noul(), ['__proto__']: null } }), status: 400, code: INVALID, message: /__proto__/ },
  { name: 'an empty question under the id __proto__', body: () => validBody({ questions: { only: noul(), ['__proto__']: {} } }), status: 400, code: INVALID, message: /__proto__/ },
  { name: 'a number as the question under the id __proto__', body: () => validBody({ questions: { only: noul(), ['__proto__']: 1 } }), status: 400, code: INVALID },
  { name: 'a null choice option under the key __proto__', body: () => q(choice({ a: 'A', ['__proto__']: null })), status: 400, code: INVALID, message: /__proto__/ },
  { name: 'a malformed image option under the id __proto__', body: () => validBody({ questions: { ['__proto__']: noul({ instructions: { image: 'http://x.test/a.png' } }) } }), status: 400, code: INVALID },
  { name: 'unknown top-level field options', body: () => validBody({ options: { temperature: 0 } }), status: 400, code: INVALID, message: /options/ },
  { name: 'unknown top-level field temperature', body: () => validBody({ temperature: 0.2 }), status: 400, code: INVALID },
  { name: 'unknown question field', body: () => q(noul({ weight: 2 })), status: 400, code: INVALID },
  // types and criteria
  { name: 'question type missing', body: () => q({ instructions: 'x' }), status: 400, code: INVALID },
  { name: 'question type unknown', body: () => q({ type: 'boolean', instructions: 'x' }), status: 400, code: INVALID },
  { name: 'instructions missing', body: () => q({ type: 'noul' }), status: 400, code: INVALID },
  { name: 'instructions a number', body: () => q(noul({ instructions: 3 })), status: 400, code: INVALID },
  { name: 'instructions empty string', body: () => q(noul({ instructions: '' })), status: 400, code: INVALID },
  { name: 'noul criteria with another key', body: () => q(noul({ criteria: { true: 'yes', maybe: 'hmm' } })), status: 400, code: INVALID },
  { name: 'noul criteria empty', body: () => q(noul({ criteria: {} })), status: 400, code: INVALID },
  { name: 'noul criteria a string', body: () => q(noul({ criteria: 'yes or no' })), status: 400, code: INVALID },
  { name: 'choice criteria missing', body: () => q({ type: 'choice', instructions: 'x' }), status: 400, code: INVALID },
  { name: 'choice criteria an array', body: () => q(choice(['a', 'b'])), status: 400, code: INVALID },
  { name: 'choice criteria empty', body: () => q(choice({})), status: 400, code: INVALID },
  { name: 'choice criteria 256 options', body: () => q(choice(opts(256))), status: 400, code: INVALID },
  { name: 'choice option value a number', body: () => q(choice({ a: 1 })), status: 400, code: INVALID },
  { name: 'score criteria missing', body: () => q({ type: 'score', instructions: 'x' }), status: 400, code: INVALID },
  { name: 'score criteria an object', body: () => q(score({ low: 'l' })), status: 400, code: INVALID },
  { name: 'score criteria empty', body: () => q(score([])), status: 400, code: INVALID },
  { name: 'score criteria 11 levels', body: () => q(score(Array.from({ length: 11 }, (_, i) => `level ${i}`))), status: 400, code: INVALID },
  // the state image
  { name: 'images not an array', body: (i) => validBody({ images: i.png }), status: 400, code: INVALID },
  { name: 'two state images', body: (i) => validBody({ images: [i.png, i.jpeg] }), status: 400, code: INVALID },
  { name: 'state image an http URL', body: () => validBody({ images: ['https://example.com/a.png'] }), status: 400, code: INVALID, message: /remote/ },
  { name: 'state image a gif', body: (i) => validBody({ images: [i.gif] }), status: 400, code: INVALID },
  { name: 'state image png prefix over jpeg bytes', body: (i) => validBody({ images: [i.jpeg.replace('data:image/jpeg', 'data:image/png')] }), status: 400, code: INVALID },
  { name: 'state image bad base64', body: () => validBody({ images: ['data:image/png;base64,@@@@'] }), status: 400, code: INVALID },
  { name: 'state image: a PNG signature cut short (the type sniffer runs out of bytes)', body: () => validBody({ images: [`data:image/png;base64,${Buffer.from([137, 80, 78, 71, 13, 10, 26, 10, 13, 10, 0, 0]).toString('base64')}`] }), status: 400, code: INVALID },
  // image options in allowed places, three deep, but malformed
  { name: 'instructions: image option (3 deep) with an http URL', body: () => q(noul({ instructions: deep3({ image: 'http://example.com/x.png' }) })), status: 400, code: INVALID },
  { name: 'instructions: image option (3 deep) a gif', body: (i) => q(noul({ instructions: deep3({ image: i.gif }) })), status: 400, code: INVALID },
  { name: 'instructions: image option (3 deep) with an extra key', body: (i) => q(noul({ instructions: deep3({ image: i.png, alt: 'x' }) })), status: 400, code: INVALID },
  { name: 'instructions: image option (3 deep) with a numeric text', body: (i) => q(noul({ instructions: deep3({ image: i.png, text: 5 }) })), status: 400, code: INVALID },
  { name: 'instructions: bare data URL (3 deep), not an image option', body: (i) => q(noul({ instructions: deep3(i.png) })), status: 400, code: INVALID },
  { name: 'choice criteria: image option (3 deep) a gif', body: (i) => q(choice({ a: deep3({ image: i.gif }), b: 'b' })), status: 400, code: INVALID },
  { name: 'noul true: image option (3 deep) with an http URL', body: () => q(noul({ criteria: { true: deep3({ image: 'https://x.test/a.png' }) } })), status: 400, code: INVALID },
  { name: 'noul false: bare data URL (3 deep)', body: (i) => q(noul({ criteria: { false: deep3(i.webp) } })), status: 400, code: INVALID },
  // image options in forbidden places
  { name: 'state: image data URL string', body: (i) => validBody({ state: i.png }), status: 400, code: INVALID, message: /state/ },
  { name: 'state: image data URL 3 deep in an object', body: (i) => validBody({ state: deep3(i.png) }), status: 400, code: INVALID, message: /state\.a\.b\.c/ },
  { name: 'state: image option 3 deep', body: (i) => validBody({ state: deep3({ image: i.png, text: 'x' }) }), status: 400, code: INVALID },
  { name: 'state: image option 3 deep in an array', body: (i) => validBody({ state: [[[{ image: i.jpeg }]]] }), status: 400, code: INVALID },
  { name: 'score criteria: image option at the top of a level', body: (i) => q(score(['low', { image: i.png }])), status: 400, code: INVALID, message: /score/ },
  { name: 'score criteria: image option 3 deep', body: (i) => q(score(['low', deep3({ image: i.png, text: 'x' })])), status: 400, code: INVALID, message: /score/ },
  { name: 'score criteria: bare data URL 3 deep', body: (i) => q(score(['low', deep3(i.webp)])), status: 400, code: INVALID },
  { name: 'score criteria: image key with a non-URL value', body: () => q(score(['low', deep3({ image: 'a drawing' })])), status: 400, code: INVALID },
  { name: 'state nested 65 levels deep', body: () => validBody({ state: JSON.parse('['.repeat(65) + ']'.repeat(65)) }), status: 400, code: INVALID, message: /nested deeper/ },
  { name: 'instructions nested 65 levels deep', body: () => q(noul({ instructions: JSON.parse('{"a":'.repeat(65) + '"x"' + '}'.repeat(65)) })), status: 400, code: INVALID, message: /nested deeper/ },
  // counts and sizes
  {
    name: 'seven images (state image + six options)',
    body: (i) => validBody({ images: [i.png], questions: { x: choice(Object.fromEntries(Array.from({ length: 6 }, (_, n) => [`k${n}`, deep3({ image: i.png })]))) } }),
    status: 400,
    code: INVALID,
    message: /7 images/,
  },
  {
    name: 'image over 5 MiB decoded',
    body: (i) => {
      const head = Buffer.from(i.png.split(',')[1], 'base64');
      const big = Buffer.concat([head, Buffer.alloc(5 * 1024 * 1024 + 1 - head.length)]);
      return q(noul({ instructions: { image: `data:image/png;base64,${big.toString('base64')}` } }));
    },
    status: 400,
    code: INVALID,
    message: /5242881 bytes/,
  },
  // models
  { name: 'unknown model', body: () => validBody({ model: 'no-such-model' }), status: 404, code: 'model_not_found' },
  { name: 'background variant of a decision model', body: () => validBody({ model: 'sim-decide-background' }), status: 404, code: 'model_not_found' },
  { name: 'a chat model id', body: () => validBody({ model: 'sim-chat' }), status: 400, code: INVALID, message: /not a decision model/ },
  { name: 'text-only decision model with a state image', body: (i) => validBody({ model: 'sim-decide-mini', images: [i.png] }), status: 400, code: INVALID, message: /text-only/ },
  { name: 'text-only decision model with an image option', body: (i) => validBody({ model: 'sim-decide-mini', questions: { x: noul({ instructions: deep3({ image: i.png }) }) } }), status: 400, code: INVALID, message: /text-only/ },
  { name: 'decision model without limits (fail-closed)', body: () => validBody({ model: 'sim-decide-nolimits' }), status: 400, code: INVALID, message: /max_state_bytes/ },
  { name: 'decision model with a zero limit (fail-closed)', body: () => validBody({ model: 'sim-decide-zero' }), status: 400, code: INVALID, message: /max_questions/ },
  // per-model limits
  { name: 'over the question count', body: () => validBody({ model: 'sim-decide-tiny' }), status: 400, code: INVALID, message: /question count/ },
  { name: 'over the state size', body: () => ({ model: 'sim-decide-tiny', state: 'x'.repeat(101), questions: { a: noul() } }), status: 400, code: INVALID, message: /state size/ },
  { name: 'over the state size (object state, bytes of its JSON)', body: () => ({ model: 'sim-decide-tiny', state: { t: 'é'.repeat(47) }, questions: { a: noul() } }), status: 400, code: INVALID, message: /state size/ },
  { name: 'over the request size', body: () => ({ model: 'sim-decide-tiny', state: 'short', questions: { a: noul({ instructions: 'word '.repeat(1700) }) } }), status: 400, code: INVALID, message: /request size/ },
  { name: 'over the input tokens', body: () => ({ model: 'sim-decide-tokens', state: 'short', questions: { a: noul({ instructions: 'paid invoice '.repeat(300) }) } }), status: 400, code: INVALID, message: /input tokens/ },
];

describe('POST /v1/systemone: validation (every rule refused, nothing billed)', () => {
  let o: TestOrg;
  let img: Images;
  before(async () => {
    img = await makeImages();
    o = await buildOrg(env().redis, { policies: { systemone: 'metered' } });
    await credit(o.org.id, 1_000_000);
    const base = { provider: 'simulator', upstream: 'sim-chat-1', capabilities: { decision: true, vision: true }, prices: { input_token: 0.5 } };
    await upsertModel({ ...base, id: 'sim-decide-tiny', limits: { max_state_bytes: 100, max_request_bytes: 8000, max_questions: 2, max_input_tokens: 100_000 } });
    await upsertModel({ ...base, id: 'sim-decide-tokens', limits: { max_state_bytes: 100_000, max_request_bytes: 1_000_000, max_questions: 10, max_input_tokens: 700 } });
    await upsertModel({ ...base, id: 'sim-decide-nolimits', limits: {} });
    await upsertModel({ ...base, id: 'sim-decide-zero', limits: { max_state_bytes: 100_000, max_request_bytes: 1_000_000, max_questions: 0, max_input_tokens: 100_000 } });
    await bumpEpoch(env().redis);
  });
  beforeEach(resetSim);

  // Each refusal checks the wallet it ran against, so each test means the same run alone or in any order.
  let walletBefore: { balance: number; reserved: number };
  beforeEach(async () => {
    walletBefore = await walletOf(o.org.id);
  });
  const walletUntouched = async () => expect(await walletOf(o.org.id), 'wallet after the refusal').to.deep.equal(walletBefore);

  for (const row of ROWS) {
    it(`${row.status} ${row.code}: ${row.name}, charging nothing`, async () => {
      const r = await decide(o.key, row.body(img));
      await expectRefused(r, row.status, row.code);
      if (row.message) expect(r.body.error.message).to.match(row.message);
      expect(r.text).not.to.match(/\bat [\w.]+ \(/); // no stack trace
      expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
      await walletUntouched();
    });
  }

  it('400 for a state nested 1,000,000 levels deep (raw body), without crashing or charging', async () => {
    const raw = `{"model":"sim-decide","state":${'['.repeat(1_000_000)}${']'.repeat(1_000_000)},"questions":{"a":{"type":"noul","instructions":"x"}}}`;
    const r = await call('POST', '/v1/systemone', { headers: { ...keyHeader(o.key), 'content-type': 'application/json' }, raw });
    await expectRefused(r, 400, INVALID);
    const alive = await call('GET', '/v1/models', { headers: keyHeader(o.key) });
    expect(alive.status).to.equal(200);
    await walletUntouched();
  });

  it('accepts the limits exactly at the boundary (255 options, 10 levels, 6 images, 64 levels deep)', async () => {
    const r = await decide(o.key, {
      model: 'sim-decide',
      state: 'boundary',
      images: [img.png],
      questions: {
        c: choice(opts(255)),
        d: noul({ instructions: JSON.parse('{"a":'.repeat(64) + '"x"' + '}'.repeat(64)), criteria: { true: JSON.parse('['.repeat(63) + '"y"' + ']'.repeat(63)) } }), // the criteria object is level 1
        s: score(Array.from({ length: 10 }, (_, i) => `level ${i}`)),
        i: choice(Object.fromEntries(Array.from({ length: 5 }, (_, n) => [`k${n}`, deep3({ image: img.webp })]))),
      },
    });
    expect(r.status, r.text).to.equal(200);
    expect(Object.keys(r.body.answers.c.probabilities)).to.have.length(255);
  });
});
