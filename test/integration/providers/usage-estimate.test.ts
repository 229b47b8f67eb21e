import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { ScriptedUpstream, chunk, completion } from '../../helpers/scripted-upstream';
import { UsageEvent } from '../../../shared/db/models';
import { countTextTokens } from '../../../shared/tokenizer/bounded';

/**
 * An OpenAI-compatible upstream that reports no usage (ignores stream_options.include_usage, or leaves
 * `usage` out of its JSON answer): the request is billed by an estimate of its tokens (the messages
 * and the generated text counted with the default tokenizer), not as nothing.
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

  it('a JSON answer without usage: billed by the counted messages and answer', async () => {
    up.reset();
    const body = completion({ role: 'assistant', content: ANSWER }, 'stop');
    delete (body as Record<string, unknown>).usage;
    up.next = [{ kind: 'json', body }];
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages } });
    expect(r.status, r.text).to.equal(200);
    const e = await billed(r.headers.get('x-service-request-id'));
    expect(e.outputTokens).to.equal(output);
    expect(e.inputTokens).to.be.at.least(inputAtLeast).and.below(inputAtLeast + 40);
  });

  it('a stream without a usage chunk (rewritten chunks and a tool call): billed by the counted messages and streamed text', async () => {
    up.reset();
    const words = ANSWER.split(/(?<= )/);
    up.next = [{ kind: 'sse', events: [chunk({ role: 'assistant', content: '' }), ...words.map((w) => chunk({ content: w })), chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"fox"}' } }] }), chunk({}, 'stop')] }];
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages, stream: true } });
    expect(r.status, r.text).to.equal(200);
    expect(r.text).to.include('data: [DONE]');
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
