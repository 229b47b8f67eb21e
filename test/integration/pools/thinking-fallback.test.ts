import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { poolModel } from '../../helpers/pool-models';
import { ScriptedUpstream, type Reply } from '../../helpers/scripted-upstream';
import { thinking, type Turn } from '../../helpers/thinking-upstream';
import { modelBoundThinking, redactedBy } from '../../helpers/model-bound-thinking';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const [A, B] = ['claude-a', 'claude-b'];
const [WHY, DONE] = ['I need the weather.', 'It is sunny.'];
const CITY = { city: 'Paris' };
const TOOL_USE = { type: 'tool_use', id: 'toolu_w', name: 'weather', input: CITY };
/** A model's two turns: its signed and redacted thinking before a weather call, then its signed thinking before the answer. */
const turnsOf = (m: string): Turn[] => [
  { think: [thinking(WHY, m), redactedBy(m)], then: [TOOL_USE], stop: 'tool_use' },
  { think: [thinking(DONE, m)], then: [{ type: 'text', text: 'Sunny in Paris.' }], stop: 'end_turn' },
];
const OVERLOADED: Reply = { kind: 'json', status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } };
const PARAMS = { type: 'object', properties: { city: { type: 'string' } } };
const THINK = { type: 'enabled' as const, budget_tokens: 1024 };

/**
 * Signed thinking on a fallback step: a conversation whose tool-using turn Claude model A answered
 * goes on, when A's pool fails (529), at fallback model B. Anthropic ties thinking blocks to the model
 * that made them and asks for them to be stripped when the model changes (docs/routing.md "Signed
 * thinking across Claude deployments"), so B gets the history without A's signed and redacted blocks,
 * and, the tool loop's turn being left without its thinking, the request without thinking. Each
 * scripted upstream reads only its own model's blocks and ignores the others, as Anthropic documents.
 * Another deployment of A's own pool keeps them.
 */
describe('model pools: signed thinking on a fallback to another Claude model', function () {
  this.timeout(60_000);
  let upA: ScriptedUpstream;
  let upA2: ScriptedUpstream;
  let upB: ScriptedUpstream;
  let fallback: string;
  let openai: OpenAI;
  let anthropic: Anthropic;
  before(async () => {
    [upA, upA2, upB] = [await ScriptedUpstream.start('anthropic'), await ScriptedUpstream.start('anthropic'), await ScriptedUpstream.start('anthropic')];
    upA2.otherwise = modelBoundThinking(A, turnsOf(A));
    upB.otherwise = modelBoundThinking(B, turnsOf(B));
    fallback = await upB.model();
    const key = (await buildOrg(env().redis)).key;
    openai = new OpenAI({ apiKey: key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: key, baseURL: env().gw.url, maxRetries: 0 });
  });
  after(async () => {
    for (const u of [upA, upA2, upB]) await u.close();
  });

  /** A fresh model on A (a new deployment: no cooldown left by an earlier test), `alsoA2` with A2 a tier below, falling back to B. */
  async function primary(alsoA2 = false): Promise<string> {
    upA.otherwise = modelBoundThinking(A, turnsOf(A));
    for (const u of [upA, upA2, upB]) u.reset();
    const d = [{ name: 'a', provider: await upA.model(), upstream: 'up-model', priority: 0 }];
    if (alsoA2) d.push({ name: 'a2', provider: await upA2.model(), upstream: 'up-model', priority: 1 });
    return poolModel(d, { fallbacks: [fallback], capabilities: { chat: true, tools: true } });
  }

  const ask = (model: string, messages: Any[]) => anthropic.messages.create({ model, max_tokens: 3000, thinking: THINK, tools: [{ name: 'weather', input_schema: PARAMS as Any }], messages }).withResponse();
  const history = (first: Anthropic.Message) => [{ role: 'user', content: 'Weather in Paris?' }, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_w', content: '22C, sunny' }] }];

  for (const stream of [false, true]) {
    it(`messages: the tool loop's next request reaches fallback B without A's signed and redacted blocks and without thinking (first turn ${stream ? 'streamed' : 'JSON'})`, async () => {
      const model = await primary();
      const q = { model, max_tokens: 3000, thinking: THINK, tools: [{ name: 'weather', input_schema: PARAMS as Any }], messages: [{ role: 'user' as const, content: 'Weather in Paris?' }] };
      const first = stream ? await anthropic.messages.stream(q).finalMessage() : await anthropic.messages.create(q);
      expect(first.content).to.deep.equal([thinking(WHY, A), redactedBy(A), TOOL_USE]);
      upA.otherwise = () => OVERLOADED;
      const { data, response } = await ask(model, history(first));
      expect(response.headers.get('x-service-fallback-model')).to.equal(fallback);
      expect((data.content.find((b) => b.type === 'text') as Anthropic.TextBlock).text).to.equal('Sunny in Paris.');
      expect(upB.received).to.have.length(1);
      expect(upB.received[0].body.messages[1], 'the turn sent to B').to.deep.equal({ role: 'assistant', content: [TOOL_USE] });
      expect(upB.received[0].body.thinking, 'thinking sent to B').to.equal(undefined);
    });
  }

  it("messages: adaptive thinking stays on the fallback's request (a turn without thinking is legal there)", async () => {
    const model = await primary();
    const adaptive = { type: 'adaptive' as const };
    const q = { model, max_tokens: 3000, thinking: adaptive, tools: [{ name: 'weather', input_schema: PARAMS as Any }] };
    const first = await anthropic.messages.create({ ...q, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    upA.otherwise = () => OVERLOADED;
    await anthropic.messages.create({ ...q, messages: history(first) as Any });
    expect(upB.received[0].body.messages[1]).to.deep.equal({ role: 'assistant', content: [TOOL_USE] });
    expect(upB.received[0].body.thinking).to.deep.equal(adaptive);
  });

  it("messages: another deployment of A's own pool gets A's blocks unchanged, with thinking", async () => {
    const model = await primary(true);
    const { data: first } = await ask(model, [{ role: 'user', content: 'Weather in Paris?' }]);
    upA.otherwise = () => OVERLOADED;
    const { data, response } = await ask(model, history(first));
    expect(response.headers.get('x-service-fallback-model')).to.equal(null);
    expect(data.content.map((b) => b.type)).to.deep.equal(['thinking', 'text']);
    expect([upA2.received.length, upB.received.length]).to.deep.equal([1, 0]);
    expect(upA2.received[0].body.messages[1]).to.deep.equal({ role: 'assistant', content: [thinking(WHY, A), redactedBy(A), TOOL_USE] });
    expect(upA2.received[0].body.thinking).to.deep.equal(THINK);
  });

  it('messages: a fallback serving the same Claude model (another account) gets its signed and redacted blocks unchanged, with thinking', async () => {
    // Anthropic: signatures are "compatible across platforms (Claude APIs, Amazon Bedrock, and Vertex AI)"; only another model needs them stripped
    const same = await ScriptedUpstream.start('anthropic');
    try {
      same.otherwise = modelBoundThinking(A, turnsOf(A));
      upA.otherwise = modelBoundThinking(A, turnsOf(A));
      upA.reset();
      const SNAPSHOT = 'claude-sonnet-4-5-20250929';
      const backup = await poolModel([{ name: 'other-account', provider: await same.model(), upstream: SNAPSHOT }], { capabilities: { chat: true, tools: true } });
      const model = await poolModel([{ name: 'a', provider: await upA.model(), upstream: SNAPSHOT }], { fallbacks: [backup], capabilities: { chat: true, tools: true } });
      const { data: first } = await ask(model, [{ role: 'user', content: 'Weather in Paris?' }]);
      upA.otherwise = () => OVERLOADED;
      const { data, response } = await ask(model, history(first));
      expect(response.headers.get('x-service-fallback-model')).to.equal(backup);
      expect(data.content.map((b) => b.type)).to.deep.equal(['thinking', 'text']);
      expect(same.received[0].body.messages[1], 'the turn sent to the same model').to.deep.equal({ role: 'assistant', content: [thinking(WHY, A), redactedBy(A), TOOL_USE] });
      expect(same.received[0].body.thinking).to.deep.equal(THINK);
    } finally {
      await same.close();
    }
  });

  it("chat: the tool loop's next request reaches fallback B without A's thinking_blocks, its effort kept", async () => {
    const model = await primary();
    const tools = [{ type: 'function' as const, function: { name: 'weather', parameters: PARAMS } }];
    const first = (await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, reasoning_effort: 'low' })).choices[0].message;
    expect((first as Any).thinking_blocks).to.deep.equal([thinking(WHY, A), redactedBy(A)]);
    upA.otherwise = () => OVERLOADED;
    const messages = [{ role: 'user', content: 'Weather in Paris?' }, first, { role: 'tool', tool_call_id: 'toolu_w', content: '22C, sunny' }];
    const { data, response } = await openai.chat.completions.create({ model, messages: messages as Any, tools, reasoning_effort: 'low' }).withResponse();
    expect(response.headers.get('x-service-fallback-model')).to.equal(fallback);
    expect(data.choices[0].message.content).to.equal('Sunny in Paris.');
    expect(upB.received[0].body.messages[1].content, 'the turn sent to B').to.deep.equal([TOOL_USE]);
    expect(upB.received[0].body.output_config, 'the effort sent to B').to.deep.equal({ effort: 'low' });
  });

  it("responses: the tool loop's next request reaches fallback B without the reasoning item's signed blocks", async () => {
    const model = await primary();
    const tools = [{ type: 'function' as const, name: 'weather', parameters: PARAMS, strict: false }];
    const first = await openai.responses.create({ model, input: 'Weather in Paris?', tools, reasoning: { effort: 'low' }, include: ['reasoning.encrypted_content'] });
    expect(first.output.find((i) => i.type === 'reasoning')?.encrypted_content).to.be.a('string');
    upA.otherwise = () => OVERLOADED;
    const input = [{ role: 'user', content: 'Weather in Paris?' }, ...first.output, { type: 'function_call_output', call_id: 'toolu_w', output: '22C, sunny' }];
    const { data, response } = await openai.responses.create({ model, input: input as Any, tools, reasoning: { effort: 'low' } }).withResponse();
    expect(response.headers.get('x-service-fallback-model')).to.equal(fallback);
    expect(data.output_text).to.equal('Sunny in Paris.');
    expect(upB.received[0].body.messages[1].content, 'the turn sent to B').to.deep.equal([TOOL_USE]);
  });
});
