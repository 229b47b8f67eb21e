import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { ScriptedUpstream, chunk, completion } from '../../helpers/scripted-upstream';
import { UsageEvent } from '../../../shared/db/models';
import { countTextTokens } from '../../../shared/tokenizer/bounded';
import { parseSse } from '../../helpers/sse-events';

const V = { 'anthropic-version': '2023-06-01' };

/** The usage object OpenAI reports, for what was billed. */
const reported = (e: UsageEvent) => ({ prompt_tokens: e.inputTokens, completion_tokens: e.outputTokens, total_tokens: e.inputTokens + e.outputTokens });

/** A legacy completions chunk of one choice. */
const textChunk = (text: string, finish: string | null = null) => ({ id: 'cmpl-s', object: 'text_completion', created: 2, model: 'up-model', choices: [{ index: 0, text, logprobs: null, finish_reason: finish }] });

/**
 * An OpenAI-compatible upstream that reports no usage (ignores stream_options.include_usage, or leaves
 * `usage` out of its JSON answer): the request is billed by an estimate of its tokens (the messages
 * and the generated text counted with the model's tokenizer), not as nothing, and the caller gets that
 * estimate where OpenAI's API reports usage, in every dialect.
 */
describe('OpenAI-compatible upstreams that report no usage', () => {
  let o: TestOrg;
  let model: string;
  const up = new ScriptedUpstream('openai');
  const ANSWER = 'The quick brown fox jumps over the lazy dog, twice over.';
  const messages = [{ role: 'user', content: 'Tell me about a fox and a dog in one sentence, please.' }];
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    await up.start();
    model = await up.model();
  });
  after(() => up.close());

  async function billed(requestId: string | null) {
    await usageSettled();
    const rows = await UsageEvent.findAll({ where: { requestId: requestId ?? '' } });
    expect(rows, 'one usage event').to.have.length(1);
    return rows[0];
  }

  const output = countTextTokens(undefined, ANSWER);
  const inputAtLeast = countTextTokens(undefined, messages[0].content);
  const words = ANSWER.split(/(?<= )/);

  /** A chat answer without usage, as JSON (`text`, default ANSWER). */
  function answerWithoutUsage(text = ANSWER): Record<string, unknown> {
    const body: Record<string, unknown> = completion({ role: 'assistant', content: text }, 'stop');
    delete body.usage;
    return body;
  }
  /** ANSWER streamed word by word, with no usage anywhere. */
  const streamWithoutUsage = () => [chunk({ role: 'assistant', content: '' }), ...words.map((w) => chunk({ content: w })), chunk({}, 'stop')];

  it('a JSON answer without usage: billed by the counted messages and answer, which its `usage` reports', async () => {
    up.reset();
    up.next = [{ kind: 'json', body: answerWithoutUsage() }];
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages } });
    expect(r.status, r.text).to.equal(200);
    const e = await billed(r.headers.get('x-service-request-id'));
    expect(e.outputTokens).to.equal(output);
    expect(e.inputTokens).to.be.at.least(inputAtLeast).and.below(inputAtLeast + 40);
    expect(r.body.usage).to.deep.equal(reported(e));
  });

  it('a stream asked for include_usage that got no usage chunk ends with OpenAI\'s usage chunk carrying the estimate', async () => {
    up.reset();
    up.next = [{ kind: 'sse', events: streamWithoutUsage() }];
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages, stream: true, stream_options: { include_usage: true } } });
    expect(r.status, r.text).to.equal(200);
    const events = parseSse(r.text).map((ev) => ev.data);
    expect(events.at(-1)).to.equal('[DONE]');
    const e = await billed(r.headers.get('x-service-request-id'));
    expect(e.outputTokens).to.equal(output);
    expect(events.at(-2)).to.deep.equal({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model, choices: [], usage: reported(e) });
    expect(events.slice(0, -2).filter((d) => d.usage), 'usage on the last chunk only').to.deep.equal([]);
  });

  it('a legacy completions stream asked for include_usage that got no usage chunk ends with a text_completion usage chunk', async () => {
    up.reset();
    up.next = [{ kind: 'sse', events: [...words.map((w) => textChunk(w)), textChunk('', 'stop')] }];
    const r = await call('POST', '/v1/completions', { headers: keyHeader(o.key), json: { model, prompt: messages[0].content, stream: true, stream_options: { include_usage: true } } });
    expect(r.status, r.text).to.equal(200);
    const events = parseSse(r.text).map((ev) => ev.data);
    const e = await billed(r.headers.get('x-service-request-id'));
    expect(e.outputTokens).to.equal(output);
    expect(events.slice(-2)).to.deep.equal([{ id: 'cmpl-s', object: 'text_completion', created: 2, model, choices: [], usage: reported(e) }, '[DONE]']);
  });

  it('the messages and responses dialects report the estimate in their answers and final stream events', async () => {
    const asked = [
      { path: '/v1/messages', json: { model, max_tokens: 100, messages }, headers: V },
      { path: '/v1/responses', json: { model, input: messages[0].content }, headers: {} },
    ];
    // each case's reported usage beside what was billed, compared at the end so a failure names every case that differs
    const seen: unknown[] = [];
    const billedAs: unknown[] = [];
    for (const a of asked) {
      for (const stream of [false, true]) {
        up.reset();
        up.next = [stream ? { kind: 'sse', events: streamWithoutUsage() } : { kind: 'json', body: answerWithoutUsage() }];
        const r = await call('POST', a.path, { headers: { ...keyHeader(o.key), ...a.headers }, json: { ...a.json, stream } });
        expect(r.status, r.text).to.equal(200);
        const e = await billed(r.headers.get('x-service-request-id'));
        expect(e.outputTokens, `${a.path} stream ${stream}`).to.equal(output);
        const events = stream ? parseSse(r.text) : [];
        const usage = !stream
          ? r.body.usage
          : a.path === '/v1/messages'
            ? events.find((ev) => ev.event === 'message_delta')?.data.usage
            : events.find((ev) => ev.event === 'response.completed')?.data.response.usage;
        seen.push({ case: `${a.path} stream ${stream}`, input: usage?.input_tokens, output: usage?.output_tokens });
        billedAs.push({ case: `${a.path} stream ${stream}`, input: e.inputTokens, output: e.outputTokens });
      }
    }
    expect(seen).to.deep.equal(billedAs);
  });

  it("an answer without usage is counted with the model's tokenizer", async () => {
    const TEXT = 'Съешь же ещё этих мягких французских булок, да выпей чаю.';
    const cl100k = countTextTokens('cl100k_base', TEXT);
    expect(cl100k, 'the two encodings count the text differently').to.not.equal(countTextTokens(undefined, TEXT));
    const other = await up.model({ tokenizer: 'cl100k_base' });
    up.reset();
    up.next = [{ kind: 'json', body: answerWithoutUsage(TEXT) }];
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: other, messages } });
    expect(r.status, r.text).to.equal(200);
    const e = await billed(r.headers.get('x-service-request-id'));
    expect(e.outputTokens).to.equal(cl100k);
    expect(r.body.usage.completion_tokens).to.equal(cl100k);
  });

  it('a stream without a usage chunk (rewritten chunks and a tool call): billed by the counted messages and streamed text, no usage chunk unasked', async () => {
    up.reset();
    up.next = [{ kind: 'sse', events: [chunk({ role: 'assistant', content: '' }), ...words.map((w) => chunk({ content: w })), chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"fox"}' } }] }), chunk({}, 'stop')] }];
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages, stream: true } });
    expect(r.status, r.text).to.equal(200);
    expect(r.text).to.include('data: [DONE]');
    expect(parseSse(r.text).filter((ev) => ev.data.usage), 'no usage chunk: the caller did not ask for one').to.deep.equal([]);
    const e = await billed(r.headers.get('x-service-request-id'));
    expect(e.outputTokens).to.equal(countTextTokens(undefined, ANSWER + 'lookup' + '{"q":"fox"}'));
    expect(e.inputTokens).to.be.at.least(inputAtLeast).and.below(inputAtLeast + 40);
  });

  it('a stream with a usage chunk is billed by it, not by an estimate', async () => {
    up.reset();
    up.next = [{ kind: 'sse', events: [chunk({ content: ANSWER }), chunk({}, 'stop'), { ...chunk({}), choices: [], usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 } }] }];
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages, stream: true } });
    expect(r.status, r.text).to.equal(200);
    const e = await billed(r.headers.get('x-service-request-id'));
    expect([e.inputTokens, e.outputTokens]).to.deep.equal([5, 7]);
  });
});
