import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { ScriptedUpstream, completion } from '../../helpers/scripted-upstream';
import { thinking, thinkingModel } from '../../helpers/thinking-upstream';
import { ended } from '../../helpers/responses-background';
import { thinkingOfEncrypted } from '../../../api/dialects/responses/thinking-content';

type Item = Record<string, unknown> & { type: string };

/** A weather call after thinking, then the answer after thinking; the model thinks unless told not to. */
const TURNS = [
  { think: [thinking('I need the weather.')], then: [{ type: 'tool_use', id: 'toolu_w', name: 'weather', input: { city: 'Paris' } }], stop: 'tool_use' },
  { think: [thinking('It is sunny.')], then: [{ type: 'text', text: 'Sunny in Paris.' }], stop: 'end_turn' },
];
const thinksByDefault = (b: Record<string, unknown>) => (b.thinking as { type?: unknown } | undefined)?.type !== 'disabled';
const weather = { type: 'function' as const, function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
const SIGNED = thinking('I need the weather.');
const reasoningOf = (items: unknown[]) => (items as Item[]).find((i) => i.type === 'reasoning')!;

/**
 * The plain translated paths on an Anthropic-native upstream that thinks (scripted to refuse a
 * tool_result turn whose tool_use is not after its signed thinking, as the real API does): chat
 * completions answer the signed blocks as the assistant message's `thinking_blocks` (LiteLLM's
 * convention), JSON and streamed, and send them back; the Responses API's stored turn and echoed
 * `encrypted_content` send them back, and so does a conversation, which keeps them whatever
 * `include` said (its items API shows them only when asked); an OpenAI-compatible upstream never gets them.
 */
describe('signed thinking on the plain translated paths (Anthropic-native upstream)', function () {
  this.timeout(30_000);
  let up: ScriptedUpstream;
  let openaiUp: ScriptedUpstream;
  let model: string;
  let client: OpenAI;
  before(async () => {
    up = await ScriptedUpstream.start('anthropic');
    up.otherwise = thinkingModel(TURNS, thinksByDefault);
    model = await up.model();
    openaiUp = await ScriptedUpstream.start('openai');
    openaiUp.otherwise = () => ({ kind: 'json', body: completion({ content: 'ok' }, 'stop') });
    client = new OpenAI({ apiKey: (await buildOrg(env().redis)).key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await up.close();
    await openaiUp.close();
  });
  beforeEach(() => up.reset());

  const ask: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
  const afterCall = (assistant: Record<string, unknown>) => [...ask, assistant, { role: 'tool', tool_call_id: 'toolu_w', content: 'sunny' }] as OpenAI.Chat.ChatCompletionMessageParam[];

  it('chat: thinking_blocks in the answer, JSON and streamed; sent back first in the turn; malformed: 400; not sent to an OpenAI-compatible upstream', async () => {
    const r = await client.chat.completions.create({ model, messages: ask, tools: [weather] });
    const msg = r.choices[0].message as OpenAI.Chat.ChatCompletionMessage & { thinking_blocks?: unknown[]; reasoning_content?: string };
    expect(msg.thinking_blocks).to.deep.equal([SIGNED]);
    expect(msg.reasoning_content).to.equal('I need the weather.');

    const stream = await client.chat.completions.create({ model, messages: ask, tools: [weather], stream: true });
    const streamed: unknown[] = [];
    for await (const c of stream) streamed.push(...(((c.choices[0]?.delta as { thinking_blocks?: unknown[] } | undefined)?.thinking_blocks) ?? []));
    expect(streamed).to.deep.equal([SIGNED]);

    up.reset();
    const next = await client.chat.completions.create({ model, messages: afterCall(msg as unknown as Record<string, unknown>), tools: [weather] });
    expect(next.choices[0].message.content).to.equal('Sunny in Paris.');
    expect(up.received[0].body.messages[1].content.map((b: Item) => b.type)).to.deep.equal(['thinking', 'tool_use']);
    expect(up.received[0].body.messages[1].content[0]).to.deep.equal(SIGNED);

    up.reset();
    const bad = await client.chat.completions
      .create({ model, messages: afterCall({ ...msg, thinking_blocks: [{ type: 'thinking', thinking: 'x' }] }), tools: [weather] })
      .then(() => undefined, (e: unknown) => e);
    expect(bad).to.be.instanceOf(OpenAI.BadRequestError);
    expect((bad as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('messages[1].thinking_blocks');
    expect(up.received).to.have.length(0);

    const other = await openaiUp.model();
    await client.chat.completions.create({ model: other, messages: afterCall(msg as unknown as Record<string, unknown>), tools: [weather] });
    expect(openaiUp.received.at(-1)!.body.messages[1]).not.to.have.property('thinking_blocks');
  });

  it('responses: previous_response_id and an echoed encrypted_content send the signed block back, JSON and streamed', async () => {
    const tools = [{ type: 'function' as const, name: 'weather', parameters: weather.function.parameters, strict: false }];
    for (const stream of [false, true]) {
      up.reset();
      const first = stream
        ? await client.responses.stream({ model, input: 'Weather in Paris?', tools, include: ['reasoning.encrypted_content'] }).finalResponse()
        : await client.responses.create({ model, input: 'Weather in Paris?', tools, include: ['reasoning.encrypted_content'] });
      const output = first.output as unknown as Item[];
      expect(output.map((i) => i.type)).to.deep.equal(['reasoning', 'function_call']);
      expect(output[0].encrypted_content).to.match(/^anthropic-signed-thinking\.v1\./);
      const result = { type: 'function_call_output' as const, call_id: 'toolu_w', output: 'sunny' };
      up.reset();
      const followed = await client.responses.create({ model, tools, previous_response_id: first.id, input: [result] });
      expect(followed.output_text).to.equal('Sunny in Paris.');
      expect(up.received[0].body.messages[1].content[0]).to.deep.equal(SIGNED);
      up.reset();
      const echoed = await client.responses.create({ model, tools, input: [{ role: 'user', content: 'Weather in Paris?' }, ...(first.output as OpenAI.Responses.ResponseInputItem[]), result] });
      expect(echoed.output_text).to.equal('Sunny in Paris.');
      expect(up.received[0].body.messages[1].content.map((b: Item) => b.type)).to.deep.equal(['thinking', 'tool_use']);
    }
  });

  it('responses: the client sees encrypted_content only when include asks, in the JSON answer and in every streamed event (also a background stream, and its replay as the include of the GET asks); the stored Response keeps it either way', async () => {
    const tools = [{ type: 'function' as const, name: 'weather', parameters: weather.function.parameters, strict: false }];
    const all = async (s: AsyncIterable<OpenAI.Responses.ResponseStreamEvent>) => {
      const evs: OpenAI.Responses.ResponseStreamEvent[] = [];
      for await (const ev of s) evs.push(ev);
      return evs;
    };
    for (const include of [undefined, ['reasoning.encrypted_content' as const]]) {
      const ask = { model, input: 'Weather in Paris?', tools, ...(include ? { include } : {}) };
      const json = await client.responses.create(ask);
      expect('encrypted_content' in reasoningOf(json.output), `JSON, include ${include}`).to.equal(!!include);
      const streamed = await all(await client.responses.create({ ...ask, stream: true }));
      const background = await all(await client.responses.create({ ...ask, stream: true, background: true }));
      const backgroundId = (background[0] as OpenAI.Responses.ResponseCreatedEvent).response.id;
      // a replay shows what its own GET's include asks, whatever the create's said
      const replayed = await all(await client.responses.retrieve(backgroundId, { stream: true, ...(include ? { include } : {}) }));
      const crossed = await all(await client.responses.retrieve(backgroundId, { stream: true, ...(include ? {} : { include: ['reasoning.encrypted_content'] }) }));
      for (const [how, evs, shown] of [['streamed', streamed, !!include], ['background', background, !!include], ['replayed', replayed, !!include], ['replayed, the other include', crossed, !include]] as const) {
        const done = evs.find((e) => e.type === 'response.output_item.done' && e.item.type === 'reasoning') as OpenAI.Responses.ResponseOutputItemDoneEvent;
        const last = evs.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
        expect(last.type, how).to.equal('response.completed');
        expect(['encrypted_content' in done.item, 'encrypted_content' in reasoningOf(last.response.output)], `${how}, include ${include}`).to.deep.equal([shown, shown]);
        expect(JSON.stringify(evs).includes('anthropic-signed-thinking'), `${how}: no other event has it`).to.equal(shown);
      }
      for (const id of [json.id, (streamed.at(-1) as OpenAI.Responses.ResponseCompletedEvent).response.id, backgroundId]) {
        const stored = await client.responses.retrieve(id, { include: ['reasoning.encrypted_content'] });
        expect(thinkingOfEncrypted(reasoningOf(stored.output).encrypted_content), `stored whole, include ${include}`).to.deep.equal([SIGNED]);
      }
    }
  });

  it('responses in a conversation: kept whole (JSON, streamed, background) whatever include said, the next turn sends the signed block back', async () => {
    const tools = [{ type: 'function' as const, name: 'weather', parameters: weather.function.parameters, strict: false }];
    for (const how of ['json', 'stream', 'background'] as const) {
      const conv = await client.conversations.create({});
      up.reset();
      const ask = { model, conversation: conv.id, input: 'Weather in Paris?', tools };
      const first =
        how === 'stream' ? await client.responses.stream(ask).finalResponse() : how === 'background' ? await ended(client, (await client.responses.create({ ...ask, background: true })).id) : await client.responses.create(ask);
      const output = first.output as unknown as Item[];
      expect(output.map((i) => i.type), how).to.deep.equal(['reasoning', 'function_call']);
      expect(output[0], how).not.to.have.property('encrypted_content');
      up.reset();
      const next = await client.responses.create({ model, conversation: conv.id, tools, input: [{ type: 'function_call_output', call_id: 'toolu_w', output: 'sunny' }] });
      expect(next.output_text, how).to.equal('Sunny in Paris.');
      expect(up.received[0].body.messages[1].content[0], how).to.deep.equal(SIGNED);
    }
  });

  it('conversation items: a reasoning item shows its encrypted_content only when include asks, listed or retrieved; an unknown include is 400', async () => {
    const conv = await client.conversations.create({});
    await client.responses.create({ model, conversation: conv.id, input: 'Weather in Paris?', tools: [{ type: 'function', name: 'weather', parameters: weather.function.parameters, strict: false }] });
    const bare = reasoningOf((await client.conversations.items.list(conv.id)).data);
    expect(bare).not.to.have.property('encrypted_content');
    expect((bare.content as unknown[])[0]).to.deep.equal({ type: 'reasoning_text', text: 'I need the weather.' });
    const included = reasoningOf((await client.conversations.items.list(conv.id, { include: ['reasoning.encrypted_content'] })).data);
    expect(included.encrypted_content).to.match(/^anthropic-signed-thinking\.v1\./);
    expect(await client.conversations.items.retrieve(bare.id as string, { conversation_id: conv.id })).not.to.have.property('encrypted_content');
    const one = (await client.conversations.items.retrieve(bare.id as string, { conversation_id: conv.id, include: ['reasoning.encrypted_content'] })) as unknown as Item;
    expect(one.encrypted_content).to.equal(included.encrypted_content);
    const bad = await client.conversations.items.list(conv.id, { include: ['reasoning.everything' as 'reasoning.encrypted_content'] }).then(() => undefined, (e: unknown) => e);
    expect(bad).to.be.instanceOf(OpenAI.BadRequestError);
    expect((bad as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('include');
  });
});
