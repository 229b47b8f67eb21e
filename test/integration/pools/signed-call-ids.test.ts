import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { hitsByUpstream, poolModel, rndId, simDeployment } from '../../helpers/pool-models';
import { upsertProvider } from '../../../shared/catalog/catalog-ops';

const LOOKUP = { type: 'function', function: { name: 'lookup', description: 'Look it up', parameters: { type: 'object', properties: { query: { type: 'string' } } } } };
const ASK = { role: 'user', content: 'please use a tool for bees' };
const anthropicHeaders = (key: string) => ({ ...keyHeader(key), 'anthropic-version': '2023-06-01' });
type ToolCall = { id: string; type: string; function: { name: string; arguments: string } };

/** The upstream's request body of the `i`-th call to upstream model `upstream`. */
function sentTo(upstream: string, i = 0): Record<string, unknown> {
  const e = env().sim.log.entries.filter((x) => x.model === upstream)[i];
  expect(e, `a request reached ${upstream}`).to.not.equal(undefined);
  return e.body as Record<string, unknown>;
}

/**
 * A conversation begun on a Gemini deployment (its tool-call ids carry the thought signature,
 * `<id>_sig_<signature>`, hundreds of characters) and continued on a deployment of another kind: a
 * mixed pool, a fallback, or the caller's next model. That upstream gets the ids without the signature
 * (its limits: OpenAI 40 or 64, Bedrock 64), call and result still paired (docs/providers.md "Gemini").
 */
describe('model pools: Gemini signed tool-call ids on a deployment of another kind', () => {
  let o: TestOrg;
  let gemini: string;
  let bedrock: string;
  const gm = () => ({ name: 'gm', provider: gemini, upstream: `gemini-${rndId()}` });
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 64 } });
    gemini = `gemini-${rndId()}`;
    await upsertProvider({ name: gemini, kind: 'gemini', base_url: env().simUrl, api_key: 'gm-test-platform-key' } as never);
    bedrock = `bedrock-${rndId()}`;
    await upsertProvider({ name: bedrock, kind: 'bedrock', base_url: env().simUrl, region: 'us-east-1', api_key: 'ABSKsimulatedbedrockkey' } as never);
  });

  const chat = (model: string, messages: unknown[], extra: Record<string, unknown> = {}) =>
    call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages, tools: [LOOKUP], ...extra } });

  /** Turn 1 on a model served by Gemini: its tool call, whose id carries the signature. */
  async function geminiCall(model: string): Promise<ToolCall> {
    const r = await chat(model, [ASK]);
    expect(r.status, r.text).to.equal(200);
    const tc = r.body.choices[0].message.tool_calls[0] as ToolCall;
    expect(tc.id).to.match(/^call_[0-9a-f]{18}_sig_[A-Za-z0-9_-]+$/).and.have.length.greaterThan(300);
    return tc;
  }
  const turnTwo = (tc: ToolCall) => [ASK, { role: 'assistant', content: null, tool_calls: [tc] }, { role: 'tool', tool_call_id: tc.id, content: 'bees are sunny' }];
  const head = (tc: ToolCall) => tc.id.split('_sig_')[0];

  /**
   * Turn 1 on a model served by Gemini, turn 2 (its Gemini deployment failing, 503) on its fallback, a
   * pool of `dep`: the tool call and the answer to turn 2, with the fallback's public id.
   */
  async function viaFallback(dep: { name: string; provider: string; upstream: string }) {
    const g = gm();
    const fallback = await poolModel([dep]);
    const model = await poolModel([g], { fallbacks: [fallback] });
    const tc = await geminiCall(model);
    env().sim.knobs.set(g.upstream, { status: 503 });
    const r = await chat(model, turnTwo(tc));
    expect(r.status, r.text).to.equal(200);
    expect(r.headers.get('x-service-fallback-model')).to.equal(fallback);
    return { tc, model };
  }

  /** What an OpenAI-compatible upstream got: the assistant's call and the tool result under the short id. */
  function expectShortChatIds(body: Record<string, unknown>, tc: ToolCall): void {
    const messages = body.messages as Array<{ tool_calls?: ToolCall[]; tool_call_id?: string }>;
    expect(messages[1].tool_calls![0]).to.deep.equal({ id: head(tc), type: 'function', function: tc.function });
    expect(messages[2].tool_call_id).to.equal(head(tc));
  }

  it('the OpenAI-compatible simulator refuses a signed id as OpenAI does (what a conversation met before)', async () => {
    const tc = await geminiCall(await poolModel([gm()]));
    const res = await fetch(`${env().simUrl}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'x', messages: turnTwo(tc) }) });
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { error: unknown }).error).to.deep.equal({
      message: `Invalid 'messages[1].tool_calls[0].id': string too long. Expected a string with maximum length 64, but got a string with length ${tc.id.length} instead.`,
      type: 'invalid_request_error',
      param: 'messages[1].tool_calls[0].id',
      code: 'string_above_max_length',
    });
  });

  it('a mixed pool: turn 2 served by the OpenAI-compatible deployment gets the ids without the signature (200); the Gemini one gets them whole', async () => {
    const g = gm();
    const oa = simDeployment('oa');
    const tc = await geminiCall(await poolModel([g]));
    const model = await poolModel([g, oa]);
    const replies = await Promise.all(Array.from({ length: 12 }, () => chat(model, turnTwo(tc))));
    for (const r of replies) {
      expect(r.status, r.text).to.equal(200);
      expect(r.body.choices[0].message.content).to.be.a('string').and.include('bees are sunny');
    }
    const served = replies.map((r) => r.headers.get('x-service-deployment'));
    expect(served, 'the OpenAI deployment served some').to.include('oa');
    const toOpenAi = hitsByUpstream().get(oa.upstream) ?? 0;
    for (let i = 0; i < toOpenAi; i++) expectShortChatIds(sentTo(oa.upstream, i), tc);
    // the Gemini deployment's turns (the first on the Gemini-only model, then the pool's) still carry the signature back
    const toGemini = hitsByUpstream().get(g.upstream) ?? 0;
    for (let i = 1; i < toGemini; i++) {
      const contents = sentTo(g.upstream, i).contents as Array<{ parts: Array<{ thoughtSignature?: string }> }>;
      expect(Buffer.from(contents[1].parts[0].thoughtSignature!, 'base64').toString('base64url')).to.equal(tc.id.split('_sig_')[1]);
    }
  });

  it('a fallback to an OpenAI-compatible model, JSON and streamed: the ids go without the signature, the answer is 200', async () => {
    const oa = simDeployment('oa');
    const { tc, model } = await viaFallback(oa);
    expectShortChatIds(sentTo(oa.upstream), tc);
    const s = await postSse('/v1/chat/completions', keyHeader(o.key), { model, messages: turnTwo(tc), tools: [LOOKUP], stream: true });
    expect(s.status, s.text).to.equal(200);
    expect(s.text).to.include('[DONE]').and.not.include('"error"');
    expectShortChatIds(sentTo(oa.upstream, 1), tc);
  });

  it('the caller continues on an OpenAI model with the responses dialect: call_id without the signature upstream', async () => {
    const g = gm();
    const oa = simDeployment('oa');
    const r1 = await call('POST', '/v1/responses', { headers: keyHeader(o.key), json: { model: await poolModel([g]), input: 'please use a tool for bees', tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }], store: false } });
    expect(r1.status, r1.text).to.equal(200);
    const fc = (r1.body.output as Array<{ type: string; call_id: string; name: string; arguments: string }>).find((i) => i.type === 'function_call')!;
    expect(fc.call_id).to.match(/_sig_/);
    const input = ['please use a tool for bees', fc, { type: 'function_call_output', call_id: fc.call_id, output: 'bees are sunny' }].map((i) => (typeof i === 'string' ? { role: 'user', content: i } : i));
    const r2 = await call('POST', '/v1/responses', { headers: keyHeader(o.key), json: { model: await poolModel([oa]), input, store: false } });
    expect(r2.status, r2.text).to.equal(200);
    const messages = sentTo(oa.upstream).messages as Array<{ tool_calls?: ToolCall[]; tool_call_id?: string }>;
    const short = fc.call_id.split('_sig_')[0];
    expect(messages.find((m) => m.tool_calls)!.tool_calls![0].id).to.equal(short);
    expect(messages.find((m) => m.tool_call_id)!.tool_call_id).to.equal(short);
  });

  it('a fallback to Bedrock Converse: toolUseId of the call and of its result without the signature (Bedrock holds them to 64)', async () => {
    const nova = { name: 'nova', provider: bedrock, upstream: `amazon.nova-pro-${rndId()}` };
    const { tc } = await viaFallback(nova);
    const messages = sentTo(nova.upstream).messages as Array<{ content: Array<{ toolUse?: { toolUseId: string }; toolResult?: { toolUseId: string } }> }>;
    expect(messages[1].content.find((b) => b.toolUse)!.toolUse!.toolUseId).to.equal(head(tc));
    expect(messages[2].content.find((b) => b.toolResult)!.toolResult!.toolUseId).to.equal(head(tc));
  });

  it('the Bedrock simulator refuses a toolUseId over 64 as Converse does', async () => {
    const long = `call_${'a'.repeat(60)}`;
    const messages = [{ role: 'user', content: [{ text: 'hi' }] }, { role: 'assistant', content: [{ toolUse: { toolUseId: long, name: 'lookup', input: {} } }] }];
    const res = await fetch(`${env().simUrl}/model/amazon.nova-pro/converse`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer k' }, body: JSON.stringify({ messages }) });
    expect(res.status).to.equal(400);
    expect(res.headers.get('x-amzn-errortype')).to.match(/^ValidationException:/);
    expect(((await res.json()) as { message: unknown }).message).to.equal("1 validation error detected: Value at 'messages.2.member.content.1.member.toolUse.toolUseId' failed to satisfy constraint: Member must have length less than or equal to 64");
  });

  it('a fallback to an Anthropic-native model (chat translated): tool_use id and tool_result tool_use_id without the signature', async () => {
    const claude = { name: 'claude', provider: 'simulator-anthropic', upstream: `claude-${rndId()}` };
    const { tc } = await viaFallback(claude);
    const messages = sentTo(claude.upstream).messages as Array<{ content: Array<{ type: string; id?: string; tool_use_id?: string }> }>;
    expect(messages[1].content.find((b) => b.type === 'tool_use')!.id).to.equal(head(tc));
    expect(messages[2].content.find((b) => b.type === 'tool_result')!.tool_use_id).to.equal(head(tc));
  });

  it('the messages dialect, begun on Gemini and continued on a Claude model (native bypass): tool_use ids without the signature', async () => {
    const g = gm();
    const claude = { name: 'claude', provider: 'simulator-anthropic', upstream: `claude-${rndId()}` };
    const tools = [{ name: 'lookup', description: 'Look it up', input_schema: { type: 'object', properties: {} } }];
    const r1 = await call('POST', '/v1/messages', { headers: anthropicHeaders(o.key), json: { model: await poolModel([g]), max_tokens: 64, tools, messages: [ASK] } });
    expect(r1.status, r1.text).to.equal(200);
    const use = (r1.body.content as Array<{ type: string; id: string; name: string; input: unknown }>).find((b) => b.type === 'tool_use')!;
    expect(use.id).to.match(/_sig_/);
    const messages = [ASK, { role: 'assistant', content: [use] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'bees are sunny' }] }];
    const r2 = await call('POST', '/v1/messages', { headers: anthropicHeaders(o.key), json: { model: await poolModel([claude]), max_tokens: 64, tools, messages } });
    expect(r2.status, r2.text).to.equal(200);
    const sent = sentTo(claude.upstream).messages as Array<{ content: Array<{ type: string; id?: string; tool_use_id?: string }> }>;
    const short = use.id.split('_sig_')[0];
    expect(sent[1].content[0]).to.deep.include({ type: 'tool_use', id: short });
    expect(sent[2].content[0]).to.deep.include({ type: 'tool_result', tool_use_id: short });
  });
});
