import { expect } from 'chai';
import OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { ScriptedUpstream, dropScriptedModel } from '../../helpers/scripted-upstream';
import { sdkFinalChatCompletion } from '../../helpers/sdk-streams';
import { usageSettled } from '../../helpers/usage';
import { poolModel, rndId, simDeployment } from '../../helpers/pool-models';
import { upsertProvider } from '../../../shared/catalog/catalog-ops';
import { UsageEvent } from '../../../shared/db/models';
import { useGeminiModels } from '../../helpers/gemini-model';

/**
 * Chat's `n` and log probabilities on a Gemini model (a scripted generateContent upstream, answered
 * in the shape of @google/genai's GenerateContentResponse): `n` is `generationConfig.candidateCount`
 * and each candidate (`index`, absent for the first as proto3 JSON leaves out a 0) a choice;
 * `logprobs`/`top_logprobs` are `responseLogprobs`/`logprobs` and each candidate's `logprobsResult`
 * the choice's `logprobs.content` (OpenAI's ChatCompletionTokenLogprob), through the official SDK.
 */
const tok = (token: string, logProbability: number) => ({ token, logProbability });
const CAFE = { chosenCandidates: [tok('Caf', -0.1), tok('é', -0.05)], topCandidates: [{ candidates: [tok('Caf', -0.1), tok('Ca', -2.5), tok('C', -3)] }, { candidates: [tok('é', -0.05), tok('e', -3.2), tok('è', -4)] }] };
const CALL = { chosenCandidates: [tok('call', -0.3)], topCandidates: [{ candidates: [tok('call', -0.3), tok('no', -1.4), tok('x', -6)] }] };
const usageMetadata = { promptTokenCount: 7, candidatesTokenCount: 12, totalTokenCount: 19 };
const lookup = { type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object', properties: { query: { type: 'string' } } } } };
const user = [{ role: 'user' as const, content: 'two answers please' }];
const callPart = { functionCall: { name: 'lookup', args: { query: 'Paris' } } };

/** Two candidates: text (with its log probabilities) and a function call. */
const TWO = {
  candidates: [
    { content: { role: 'model', parts: [{ text: 'Café' }] }, finishReason: 'STOP', avgLogprobs: -0.075, logprobsResult: CAFE },
    { content: { role: 'model', parts: [callPart] }, finishReason: 'STOP', index: 1, avgLogprobs: -0.3, logprobsResult: CALL },
  ],
  usageMetadata,
  modelVersion: 'up-model',
  responseId: 'resp-two',
};

/** The same two streamed: the first candidate finishes before the second has. */
const STREAM = [
  { candidates: [{ content: { role: 'model', parts: [{ text: 'Caf' }] }, logprobsResult: { chosenCandidates: [CAFE.chosenCandidates[0]], topCandidates: [CAFE.topCandidates[0]] } }], usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 } },
  { candidates: [{ content: { role: 'model', parts: [{ text: 'é' }] }, finishReason: 'STOP', logprobsResult: { chosenCandidates: [CAFE.chosenCandidates[1]], topCandidates: [CAFE.topCandidates[1]] } }], usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 } },
  { candidates: [{ content: { role: 'model', parts: [callPart] }, finishReason: 'STOP', index: 1, logprobsResult: CALL }], usageMetadata },
];

const bytes = (s: string) => [...Buffer.from(s, 'utf8')];
/** OpenAI's ChatCompletionTokenLogprob for Gemini's tokens, with `top` of the step's top tokens. */
const openaiTokens = (r: typeof CAFE, top: number) =>
  r.chosenCandidates.map((t, i) => ({ token: t.token, logprob: t.logProbability, bytes: bytes(t.token), top_logprobs: r.topCandidates[i].candidates.slice(0, top).map((a) => ({ token: a.token, logprob: a.logProbability, bytes: bytes(a.token) })) }));

describe('provider kind gemini: n candidates and log probabilities', function () {
  this.timeout(30_000);
  let up: ScriptedUpstream;
  let client: OpenAI;
  let orgId: string;
  let model: string;
  beforeEach(async () => {
    await resetSim();
    up.reset();
  });
  before(async () => {
    const o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 16 } });
    orgId = o.org.id;
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    up = await ScriptedUpstream.start('gemini');
    model = await up.model();
  });
  after(() => up.close());

  async function billed(requestId: string | null | undefined) {
    await usageSettled();
    return UsageEvent.findAll({ where: { requestId: requestId! } });
  }

  it('n=2 (JSON): candidateCount 2; each candidate a choice at its index with its own finish reason and tool calls; usage as Gemini counts it, billed once', async () => {
    up.next.push({ kind: 'json', body: TWO });
    const { data: r, response } = await client.chat.completions.create({ model, messages: user, n: 2, tools: [lookup] }).withResponse();
    expect(up.received[0].path).to.equal('/v1beta/models/up-model:generateContent');
    expect(up.received[0].body.generationConfig).to.deep.equal({ candidateCount: 2 });
    expect(r.choices.map((c) => c.index)).to.deep.equal([0, 1]);
    expect(r.choices[0]).to.deep.include({ finish_reason: 'stop', logprobs: null });
    expect(r.choices[0].message.content).to.equal('Café');
    expect(r.choices[1].finish_reason).to.equal('tool_calls');
    expect(r.choices[1].message.content).to.equal(null);
    expect(r.choices[1].message.tool_calls!.map((t) => (t as { function: unknown }).function)).to.deep.equal([{ name: 'lookup', arguments: '{"query":"Paris"}' }]);
    expect(r.usage).to.deep.include({ prompt_tokens: 7, completion_tokens: 12, total_tokens: 19 });
    const rows = await billed(response.headers.get('x-service-request-id'));
    expect(rows.map((e) => [e.inputTokens, e.outputTokens])).to.deep.equal([[7, 12]]);
  });

  it('n=2 (streamed): chunks carry each candidate’s index, the stream goes on after the first candidate finishes, the SDK’s ChatCompletionStream accepts it; usage once', async () => {
    up.next.push({ kind: 'sse', events: STREAM });
    const { data: stream, response } = await client.chat.completions.create({ model, messages: user, n: 2, tools: [lookup], stream: true, stream_options: { include_usage: true } }).withResponse();
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    expect(up.received[0].path).to.equal('/v1beta/models/up-model:streamGenerateContent?alt=sse');
    expect(up.received[0].body.generationConfig).to.deep.equal({ candidateCount: 2 });
    expect(new Set(chunks.flatMap((c) => c.choices.map((x) => x.index)))).to.deep.equal(new Set([0, 1]));
    const finished = chunks.flatMap((c) => c.choices.filter((x) => x.finish_reason).map((x) => [x.index, x.finish_reason]));
    expect(finished).to.deep.equal([[0, 'stop'], [1, 'tool_calls']]);
    const final = await sdkFinalChatCompletion(chunks);
    expect(final.choices[0].message.content).to.equal('Café');
    expect(final.choices[1].message.tool_calls!.map((t) => (t as { function: unknown }).function)).to.deep.equal([{ name: 'lookup', arguments: '{"query":"Paris"}' }]);
    expect(chunks.filter((c) => c.usage)).to.have.length(1);
    expect(chunks.at(-1)!.usage).to.deep.include({ prompt_tokens: 7, completion_tokens: 12 });
    const rows = await billed(response.headers.get('x-service-request-id'));
    expect(rows.map((e) => [e.inputTokens, e.outputTokens])).to.deep.equal([[7, 12]]);
  });

  it('logprobs and top_logprobs (JSON and streamed): responseLogprobs and logprobs sent; logprobsResult answered as logprobs.content with the tokens’ UTF-8 bytes', async () => {
    up.next.push({ kind: 'json', body: TWO }, { kind: 'sse', events: STREAM }, { kind: 'json', body: TWO });
    const r = await client.chat.completions.create({ model, messages: user, n: 2, logprobs: true, top_logprobs: 2 });
    expect(up.received[0].body.generationConfig).to.deep.equal({ candidateCount: 2, responseLogprobs: true, logprobs: 2 });
    expect(r.choices[0].logprobs).to.deep.equal({ content: openaiTokens(CAFE, 2), refusal: null });
    expect(r.choices[1].logprobs).to.deep.equal({ content: openaiTokens(CALL, 2), refusal: null });
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of await client.chat.completions.create({ model, messages: user, n: 2, logprobs: true, top_logprobs: 2, stream: true })) chunks.push(c);
    const final = await sdkFinalChatCompletion(chunks);
    expect(final.choices[0].logprobs!.content).to.deep.equal(openaiTokens(CAFE, 2));
    expect(final.choices[1].logprobs!.content).to.deep.equal(openaiTokens(CALL, 2));
    const plain = await client.chat.completions.create({ model, messages: user, n: 2, logprobs: true });
    expect(up.received[2].body.generationConfig, 'no top tokens asked for').to.deep.equal({ candidateCount: 2, responseLogprobs: true });
    expect(plain.choices[0].logprobs!.content).to.deep.equal(openaiTokens(CAFE, 0));
  });

  it('the Responses API’s top_logprobs reach Gemini and come back as the output_text’s logprobs', async () => {
    up.next.push({ kind: 'json', body: { ...TWO, candidates: [TWO.candidates[0]] } });
    const r = await client.responses.create({ model, input: 'hi', top_logprobs: 1, include: ['message.output_text.logprobs'] });
    expect(up.received[0].body.generationConfig).to.deep.include({ responseLogprobs: true, logprobs: 1 });
    const text = r.output.flatMap((o) => (o.type === 'message' ? o.content : [])).find((p) => p.type === 'output_text');
    expect(text).to.deep.include({ text: 'Café' });
    expect((text as { logprobs: unknown }).logprobs).to.deep.equal(openaiTokens(CAFE, 1));
  });

  it('streamed, the Responses API’s output_text deltas carry Gemini’s log probabilities, also when thought parts share the event', async () => {
    const thoughtFirst = [
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Weighing it.', thought: true }, { text: 'Caf' }] }, logprobsResult: { chosenCandidates: [CAFE.chosenCandidates[0]], topCandidates: [CAFE.topCandidates[0]] } }], usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 } },
      STREAM[1],
    ];
    up.next.push({ kind: 'sse', events: thoughtFirst }, { kind: 'sse', events: thoughtFirst });
    const stream = await client.responses.create({ model, input: 'hi', top_logprobs: 1, include: ['message.output_text.logprobs'], reasoning: { effort: 'low' }, stream: true });
    const deltas: unknown[] = [];
    let done: OpenAI.Responses.Response | undefined;
    for await (const e of stream) {
      if (e.type === 'response.output_text.delta') deltas.push(...e.logprobs);
      if (e.type === 'response.completed') done = e.response;
    }
    const tokens = openaiTokens(CAFE, 1).map(({ token, logprob, top_logprobs }) => ({ token, logprob, top_logprobs: top_logprobs.map((a) => ({ token: a.token, logprob: a.logprob })) }));
    expect(deltas, 'the deltas’ logprobs').to.deep.equal(tokens);
    const text = done!.output.flatMap((o) => (o.type === 'message' ? o.content : [])).find((p) => p.type === 'output_text');
    expect((text as { logprobs: unknown }).logprobs).to.deep.equal(openaiTokens(CAFE, 1));
    // chat: the tokens ride on content deltas, not on the reasoning delta of the same event
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of await client.chat.completions.create({ model, messages: user, logprobs: true, top_logprobs: 1, reasoning_effort: 'low', stream: true })) chunks.push(c);
    const carriers = chunks.filter((c) => c.choices[0]?.logprobs).map((c) => Object.keys(c.choices[0].delta));
    expect(carriers).to.deep.equal([['content'], ['content']]);
  });

  it("a top_logprobs outside 0..20 (OpenAI's integer_above_max_value, invalid_type), or without logprobs (invalid_request), is 400 naming it: nothing sent, nothing billed", async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId } });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ logprobs: true, top_logprobs: 21 }, 'integer_above_max_value'],
      [{ logprobs: true, top_logprobs: 1.5 }, 'invalid_type'],
      [{ top_logprobs: 3 }, 'invalid_request'],
    ];
    for (const [extra, code] of cases) {
      const err = await client.chat.completions.create({ model, messages: user, ...extra }).catch((e: unknown) => e);
      expect(err, JSON.stringify(extra)).to.be.instanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).code, JSON.stringify(extra)).to.equal(code);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('top_logprobs');
    }
    expect(up.received).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId } })).to.equal(before);
  });

  it('a mixed pool no longer steers n=2 and logprobs away from its Gemini deployment: the preferred Gemini deployment answers them', async () => {
    const provider = `gemini-pool-${rndId()}`;
    await upsertProvider({ name: provider, kind: 'gemini', base_url: up.url, api_key: 'gm-key' } as never);
    const pool = await poolModel([{ name: 'gm', provider, upstream: 'up-model', priority: 0 }, simDeployment('oa', { priority: 1 })]);
    try {
      up.next.push({ kind: 'json', body: TWO });
      const { data: r, response } = await client.chat.completions.create({ model: pool, messages: user, n: 2, logprobs: true, top_logprobs: 1 }).withResponse();
      expect(response.headers.get('x-service-deployment')).to.equal('gm');
      expect(up.received).to.have.length(1);
      expect(r.choices).to.have.length(2);
      expect(r.choices[0].logprobs!.content).to.deep.equal(openaiTokens(CAFE, 1));
    } finally {
      await dropScriptedModel(provider); // the pool's model row is its first deployment's provider's: both go
    }
  });
});

/**
 * `n` on a Gemini model against the simulator's Gemini route, which streams several candidates as
 * Google's API does (scripts/simulator/routes/gemini.ts streamedChunks: each chunk the next part of
 * every candidate still going, named by its `index`; one that ended is no longer in the list): the
 * gateway's chat stream, through the real app and workers, must give each choice its own deltas at its
 * index and its own finish_reason, go on after one candidate ends, and count the usage once.
 */
describe('provider kind gemini on the simulator: n=2 streamed', function () {
  this.timeout(30_000);
  let client: OpenAI;
  useGeminiModels();
  before(async () => {
    const o = await buildOrg(env().redis);
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  beforeEach(() => resetSim());

  it('each candidate is the choice at its index with its own deltas and finish_reason, the stream goes on after the first ends, usage once and billed once, as the JSON answer says', async () => {
    const body = { model: 'test-gemini', messages: [{ role: 'user' as const, content: 'two answers please' }], n: 2 };
    const json = await client.chat.completions.create(body);
    expect(json.choices.map((c) => [c.index, c.finish_reason])).to.deep.equal([[0, 'stop'], [1, 'stop']]);
    expect(json.choices[0].message.content, 'two different candidates').to.not.equal(json.choices[1].message.content);
    const { data: stream, response } = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }).withResponse();
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    const upstream = env().sim.log.entries.at(-1)!;
    expect(upstream.path).to.equal('/v1beta/models/sim-gemini-1:streamGenerateContent');
    expect((upstream.body as { generationConfig: unknown }).generationConfig).to.deep.include({ candidateCount: 2 });
    // each chunk holds one choice; each choice finishes once, the shorter second one first, and the first goes on after it
    expect(chunks.every((c) => c.choices.length <= 1)).to.equal(true);
    const finished = chunks.flatMap((c, at) => c.choices.filter((x) => x.finish_reason).map((x) => ({ index: x.index, reason: x.finish_reason, at })));
    expect(finished.map((f) => [f.index, f.reason])).to.deep.equal([[1, 'stop'], [0, 'stop']]);
    expect(chunks.slice(finished[0].at + 1).some((c) => c.choices[0]?.index === 0 && c.choices[0].delta.content), 'choice 0 goes on after choice 1 ended').to.equal(true);
    const text = (i: number) => chunks.flatMap((c) => c.choices.filter((x) => x.index === i).map((x) => x.delta.content ?? '')).join('');
    expect([text(0), text(1)]).to.deep.equal([json.choices[0].message.content, json.choices[1].message.content]);
    const final = await sdkFinalChatCompletion(chunks);
    expect(final.choices.map((c) => c.message.content)).to.deep.equal(json.choices.map((c) => c.message.content));
    expect(chunks.filter((c) => c.usage)).to.have.length(1);
    expect(chunks.at(-1)!.usage).to.deep.include({ prompt_tokens: json.usage!.prompt_tokens, completion_tokens: json.usage!.completion_tokens });
    await usageSettled();
    const rows = await UsageEvent.findAll({ where: { requestId: response.headers.get('x-service-request-id')! } });
    expect(rows.map((e) => [e.inputTokens, e.outputTokens])).to.deep.equal([[json.usage!.prompt_tokens, json.usage!.completion_tokens]]);
  });
});
