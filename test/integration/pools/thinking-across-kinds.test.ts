import { expect } from 'chai';
import crypto from 'crypto';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { ScriptedUpstream } from '../../helpers/scripted-upstream';
import { REDACTED, thinking, thinkingModel } from '../../helpers/thinking-upstream';
import { BedrockThinkingUpstream, redactedReasoning, signedReasoning } from '../../helpers/bedrock-thinking-upstream';
import { upsertModel } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { thinkingOfEncrypted } from '../../../api/dialects/responses/thinking-content';

type Kind = 'native' | 'bedrock';
type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const CLAUDE = 'anthropic.claude-sonnet-4-20250514-v1:0';
const [WHY, DONE] = ['I need the weather.', 'It is sunny.'];
const CITY = { city: 'Paris' };
/** The same two turns on either kind: signed and redacted thinking before a weather call, then signed thinking before the answer. */
const NATIVE_TURNS = [
  { think: [thinking(WHY), REDACTED], then: [{ type: 'tool_use', id: 'toolu_w', name: 'weather', input: CITY }], stop: 'tool_use' },
  { think: [thinking(DONE)], then: [{ type: 'text', text: 'Sunny in Paris.' }], stop: 'end_turn' },
];
const BEDROCK_TURNS = [
  { think: [signedReasoning(WHY), redactedReasoning], then: [{ toolUse: { toolUseId: 'toolu_w', name: 'weather', input: CITY } }], stop: 'tool_use' },
  { think: [signedReasoning(DONE)], then: [{ text: 'Sunny in Paris.' }], stop: 'end_turn' },
];
/** The tool-using turn as the next deployment must receive it: its signed and redacted blocks first, unchanged, in its own wire format. */
const SENT_BACK: Record<Kind, unknown[]> = {
  native: [thinking(WHY), REDACTED, { type: 'tool_use', id: 'toolu_w', name: 'weather', input: CITY }],
  bedrock: [signedReasoning(WHY), redactedReasoning, { toolUse: { toolUseId: 'toolu_w', name: 'weather', input: CITY } }],
};
const PARAMS = { type: 'object', properties: { city: { type: 'string' } } };
const thinksByDefault = (b: Record<string, unknown>) => (b.thinking as { type?: unknown } | undefined)?.type !== 'disabled';

/**
 * Signed thinking across the kinds of one pool: Anthropic documents signatures as portable between
 * its API and Bedrock (docs/providers/bedrock.md "Reasoning"), so a conversation whose tool-using turn
 * one Claude deployment answered goes on at the other with that turn's signed and redacted blocks
 * unchanged, in each of the three dialects, JSON and streamed. Both scripted upstreams check a
 * signature the same way (bound to its text) and refuse a modified one, or a tool-using turn sent
 * back without its thinking, as the real APIs do. The pool's priorities pick the deployment of each turn.
 */
describe('model pools: signed thinking goes on across an Anthropic and a Bedrock Claude deployment', function () {
  this.timeout(60_000);
  let native: ScriptedUpstream;
  let bedrock: BedrockThinkingUpstream;
  let providers: Record<Kind, string>;
  const model = `pool-think-${crypto.randomBytes(4).toString('hex')}`;
  let openai: OpenAI;
  let anthropic: Anthropic;
  before(async () => {
    native = await ScriptedUpstream.start('anthropic');
    native.otherwise = thinkingModel(NATIVE_TURNS, thinksByDefault);
    bedrock = await new BedrockThinkingUpstream(BEDROCK_TURNS).start();
    providers = { native: await native.model(), bedrock: await bedrock.model(`bedrock-think-${crypto.randomBytes(3).toString('hex')}`, CLAUDE) };
    const key = (await buildOrg(env().redis)).key;
    openai = new OpenAI({ apiKey: key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: key, baseURL: env().gw.url, maxRetries: 0 });
  });
  after(async () => {
    await native.close(); // the pool model goes with its primary provider
    await bedrock.close();
  });

  /** The pool with `first` in the better tier (the other a tier below): the next request goes to it. */
  async function lead(first: Kind): Promise<void> {
    const d = (name: Kind, upstream: string) => ({ name, provider: providers[name], upstream, priority: name === first ? 0 : 1 });
    await upsertModel({ id: model, deployments: [d('native', 'up-model'), d('bedrock', CLAUDE)], capabilities: { chat: true, tools: true }, prices: { input_token: 1, output_token: 1 } });
    await bumpEpoch(env().redis);
    native.reset();
    bedrock.received = [];
  }
  /** What each kind received: the messages of its requests. */
  const received = (k: Kind): Any[] => (k === 'native' ? native.received : bedrock.received).map((r) => r.body.messages);

  /** Per dialect: the first turn (JSON or streamed) as the client keeps it, its signed blocks as the client got them, and the next turn's answer text. */
  const dialects: Record<string, { first: (stream: boolean) => Promise<Any>; blocks: (first: Any) => unknown; next: (first: Any) => Promise<string | null> }> = {
    chat: {
      async first(stream) {
        const ask = { model, messages: [{ role: 'user' as const, content: 'Weather in Paris?' }], tools: [{ type: 'function' as const, function: { name: 'weather', parameters: PARAMS } }], reasoning_effort: 'low' as const };
        if (!stream) return (await openai.chat.completions.create(ask)).choices[0].message;
        const blocks: unknown[] = [];
        for await (const c of await openai.chat.completions.create({ ...ask, stream: true })) blocks.push(...((c.choices[0]?.delta as Any)?.thinking_blocks ?? []));
        return { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_w', type: 'function', function: { name: 'weather', arguments: JSON.stringify(CITY) } }], thinking_blocks: blocks };
      },
      blocks: (m) => m.thinking_blocks,
      async next(m) {
        const messages = [{ role: 'user', content: 'Weather in Paris?' }, m, { role: 'tool', tool_call_id: 'toolu_w', content: '22C, sunny' }];
        const r = await openai.chat.completions.create({ model, messages, tools: [{ type: 'function', function: { name: 'weather', parameters: PARAMS } }], reasoning_effort: 'low' });
        return r.choices[0].message.content;
      },
    },
    messages: {
      first: (stream) => {
        const ask = { model, max_tokens: 3000, thinking: { type: 'enabled' as const, budget_tokens: 1024 }, tools: [{ name: 'weather', input_schema: PARAMS as Any }], messages: [{ role: 'user' as const, content: 'Weather in Paris?' }] };
        return stream ? anthropic.messages.stream(ask).finalMessage() : anthropic.messages.create(ask);
      },
      blocks: (m) => m.content.filter((b: Any) => b.type === 'thinking' || b.type === 'redacted_thinking'),
      async next(m) {
        const messages = [{ role: 'user', content: 'Weather in Paris?' }, { role: 'assistant', content: m.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_w', content: '22C, sunny' }] }];
        const r = await anthropic.messages.create({ model, max_tokens: 3000, thinking: { type: 'enabled', budget_tokens: 1024 }, tools: [{ name: 'weather', input_schema: PARAMS as Any }], messages: messages as Any });
        return (r.content.find((b) => b.type === 'text') as Anthropic.TextBlock).text;
      },
    },
    responses: {
      first: (stream) => {
        const ask = { model, input: 'Weather in Paris?', tools: [{ type: 'function' as const, name: 'weather', parameters: PARAMS, strict: false }], reasoning: { effort: 'low' as const }, include: ['reasoning.encrypted_content' as const] };
        return stream ? openai.responses.stream(ask).finalResponse() : openai.responses.create(ask);
      },
      blocks: (r) => thinkingOfEncrypted(r.output.find((i: Any) => i.type === 'reasoning')?.encrypted_content),
      async next(r) {
        const input = [{ role: 'user', content: 'Weather in Paris?' }, ...r.output, { type: 'function_call_output', call_id: 'toolu_w', output: '22C, sunny' }];
        const tools = [{ type: 'function' as const, name: 'weather', parameters: PARAMS, strict: false }];
        return (await openai.responses.create({ model, input, tools, reasoning: { effort: 'low' } })).output_text;
      },
    },
  };

  for (const [dialect, d] of Object.entries(dialects)) {
    for (const [from, to] of [['native', 'bedrock'], ['bedrock', 'native']] as Array<[Kind, Kind]>) {
      for (const stream of [false, true]) {
        it(`${dialect}: a tool-using turn the ${from} deployment answered (${stream ? 'streamed' : 'JSON'}) goes on at the ${to} one with its signed and redacted blocks unchanged`, async () => {
          await lead(from);
          const first = await d.first(stream);
          expect([received(from).length, received(to).length], 'the first turn').to.deep.equal([1, 0]);
          expect(d.blocks(first), 'the blocks the client got').to.deep.equal([thinking(WHY), REDACTED]);
          await lead(to);
          expect(await d.next(first)).to.equal('Sunny in Paris.');
          expect([received(from).length, received(to).length], 'the next turn').to.deep.equal([0, 1]);
          expect(received(to)[0][1], `the turn sent to ${to}`).to.deep.equal({ role: 'assistant', content: SENT_BACK[to] });
        });
      }
    }
  }
});
