import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { ScriptedUpstream } from '../../helpers/scripted-upstream';
import { thinking, thinkingModel } from '../../helpers/thinking-upstream';
import { expectOpenAI, expectResponsesEvent, responsesEventForDocument, withoutNullUser } from '../../helpers/conformance';
import { ended } from '../../helpers/responses-background';

type Item = Record<string, unknown> & { type: string };
type Event = OpenAI.Responses.ResponseStreamEvent;
type Part = Record<string, unknown> & { type: string };

const TURNS = [{ think: [thinking('I need the weather.')], then: [{ type: 'tool_use', id: 'toolu_w', name: 'weather', input: { city: 'Paris' } }], stop: 'tool_use' }];
const tools = [{ type: 'function' as const, name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
const ENCRYPTED = /^anthropic-signed-thinking\.v1\./;
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

const reasoningOf = (items: unknown[]) => (items as Item[]).find((i) => i.type === 'reasoning')!;
const partsOf = (items: unknown[], type: string) => (items as Item[]).flatMap((i) => (i.type === 'message' ? (i.content as Part[]) : [])).filter((p) => p.type === type);
/** Every event of a stream, in order. */
async function all(stream: AsyncIterable<OpenAI.Responses.ResponseStreamEvent>): Promise<Event[]> {
  const out: Event[] = [];
  for await (const ev of stream) out.push(ev);
  return out;
}
/** The output items a stream's events carry: each output_item.done's item and the final event's Response's output. */
const itemsOf = (evs: Event[]) => evs.flatMap((e) => (e.type === 'response.output_item.done' ? [e.item] : e.type === 'response.completed' ? e.response.output : [])) as unknown as Item[];
/** Every log probability list a stream's events carry: the output_text events' own, and their parts' and items'. */
const logprobsOf = (evs: Event[]) => [
  ...evs.flatMap((e) => (e.type === 'response.output_text.delta' || e.type === 'response.output_text.done' ? [e.logprobs] : [])),
  ...evs.flatMap((e) => (e.type === 'response.content_part.done' && e.part.type === 'output_text' ? [e.part.logprobs] : [])),
  ...partsOf(itemsOf(evs), 'output_text').map((p) => p.logprobs),
];
const refusal = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as InstanceType<typeof OpenAI.BadRequestError>);

/**
 * `include` on `GET /v1/responses/{id}` (client.responses.retrieve; with `stream: true`, a background
 * stream's events replayed) and `GET /v1/responses/{id}/input_items`
 * (client.responses.inputItems.list), OpenAI's ResponseIncludable
 * query: what it adds is shown only when it asks, whatever the create asked: a reasoning item's
 * `encrypted_content` (an Anthropic-native turn's signed thinking, stored whatever the create's
 * `include` said), an output_text part's `logprobs` (stored when the create asked for them), an input
 * image's `image_url`. An unknown value: 400 naming `include`.
 */
describe('responses dialect: include on retrieve and input items', function () {
  this.timeout(30_000);
  let up: ScriptedUpstream;
  let model: string;
  let client: OpenAI;
  before(async () => {
    up = await ScriptedUpstream.start('anthropic');
    up.otherwise = thinkingModel(TURNS, () => true);
    model = await up.model();
    client = new OpenAI({ apiKey: (await buildOrg(env().redis)).key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  after(() => up.close());
  beforeEach(resetSim);

  it("retrieve: a reasoning item's encrypted_content only with include, whatever the create's include said (JSON, streamed, background)", async () => {
    const made = [
      await client.responses.create({ model, input: 'Weather in Paris?', tools }),
      await client.responses.stream({ model, input: 'Weather in Paris?', tools, include: ['reasoning.encrypted_content'] }).finalResponse(),
      await ended(client, (await client.responses.create({ model, input: 'Weather in Paris?', tools, background: true })).id),
    ];
    expect(reasoningOf(made[0].output), 'not asked at create').not.to.have.property('encrypted_content');
    expect(reasoningOf(made[1].output).encrypted_content, 'asked at create').to.match(ENCRYPTED);
    for (const [i, r] of made.entries()) {
      const bare = await client.responses.retrieve(r.id);
      expect(reasoningOf(bare.output), `${i}: without include`).not.to.have.property('encrypted_content');
      const asked = await client.responses.retrieve(r.id, { include: ['reasoning.encrypted_content'] });
      expect(reasoningOf(asked.output).encrypted_content, `${i}: with include`).to.match(ENCRYPTED);
      expect({ ...reasoningOf(asked.output), encrypted_content: undefined }, `${i}: the same item`).to.deep.equal({ ...reasoningOf(bare.output), encrypted_content: undefined });
      expectOpenAI('Response', withoutNullUser(asked));
    }
    expect(reasoningOf((await client.responses.retrieve(made[1].id, { include: ['reasoning.encrypted_content'] })).output).encrypted_content).to.equal(reasoningOf(made[1].output).encrypted_content);
  });

  it('retrieve: output_text logprobs only with include (those the create asked for; none stored otherwise)', async () => {
    const asked = await client.responses.create({ model: 'sim-chat', input: 'probabilities please', include: ['message.output_text.logprobs'] });
    const logprobs = partsOf(asked.output, 'output_text')[0].logprobs as unknown[];
    expect(logprobs).to.have.length.above(3);
    expect(partsOf((await client.responses.retrieve(asked.id)).output, 'output_text')[0].logprobs, 'without include').to.deep.equal([]);
    const shown = await client.responses.retrieve(asked.id, { include: ['message.output_text.logprobs'] });
    expect(partsOf(shown.output, 'output_text')[0].logprobs, 'with include').to.deep.equal(logprobs);
    expect(shown.output_text).to.equal(asked.output_text);

    const plain = await client.responses.create({ model: 'sim-chat', input: 'no probabilities' });
    expect(partsOf((await client.responses.retrieve(plain.id, { include: ['message.output_text.logprobs'] })).output, 'output_text')[0].logprobs, 'none stored').to.deep.equal([]);
  });

  it("input items: an input image's image_url, an echoed reasoning item's encrypted_content and an echoed answer's logprobs only with include; so do a conversation's items", async () => {
    const first = await client.responses.create({ model, input: 'Weather in Paris?', tools, include: ['reasoning.encrypted_content'] });
    const echoedReasoning = reasoningOf(first.output);
    const logprob = { token: 'Sunny', logprob: -0.01, bytes: [...Buffer.from('Sunny')], top_logprobs: [] };
    const input = [
      { role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: PNG, detail: 'auto' }] },
      echoedReasoning,
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Sunny', annotations: [], logprobs: [logprob] }] },
      { role: 'user', content: 'And tomorrow?' },
    ] as OpenAI.Responses.ResponseInputItem[];
    const r = await client.responses.create({ model: 'sim-chat', input });
    expect(r.status).to.equal('completed');

    const bare = (await client.responses.inputItems.list(r.id, { order: 'asc' })).data;
    expect(bare.map((i) => i.type)).to.deep.equal(['message', 'reasoning', 'message', 'message']);
    expect(partsOf(bare, 'input_image')).to.deep.equal([{ type: 'input_image', image_url: null, detail: 'auto' }]);
    expect(reasoningOf(bare)).not.to.have.property('encrypted_content');
    expect(partsOf(bare, 'output_text')[0].logprobs).to.deep.equal([]);

    const all = (await client.responses.inputItems.list(r.id, { order: 'asc', include: ['message.input_image.image_url', 'reasoning.encrypted_content', 'message.output_text.logprobs'] })).data;
    expect(partsOf(all, 'input_image')[0].image_url).to.equal(PNG);
    expect(reasoningOf(all).encrypted_content).to.equal(echoedReasoning.encrypted_content);
    expect(partsOf(all, 'output_text')[0].logprobs).to.deep.equal([logprob]);
    expect(all.map((i) => i.id)).to.deep.equal(bare.map((i) => i.id));

    const conv = await client.conversations.create({ items: [input[0]] as OpenAI.Conversations.ConversationCreateParams['items'] });
    const items = (await client.conversations.items.list(conv.id)).data;
    expect(partsOf(items, 'input_image')[0].image_url, 'conversation item without include').to.equal(null);
    const included = (await client.conversations.items.list(conv.id, { include: ['message.input_image.image_url'] })).data;
    expect(partsOf(included, 'input_image')[0].image_url, 'conversation item with include').to.equal(PNG);
  });

  it("retrieve with stream (a background stream's events replayed): encrypted_content and logprobs only with the GET's own include, whatever the create's said", async () => {
    const bare = await all(await client.responses.create({ model, input: 'Weather in Paris?', tools, background: true, stream: true }));
    const thought = (bare[0] as Event & { response: OpenAI.Responses.Response }).response.id;
    expect(itemsOf(bare).filter((i) => i.type === 'reasoning'), 'not asked at create').to.have.length(2).and.satisfy((is: Item[]) => is.every((i) => !('encrypted_content' in i)));
    expect(await all(await client.responses.retrieve(thought, { stream: true })), 'replayed without include: as the create showed them').to.deep.equal(bare);
    const asked = await all(await client.responses.retrieve(thought, { stream: true, include: ['reasoning.encrypted_content'] }));
    const reasoning = itemsOf(asked).filter((i) => i.type === 'reasoning');
    expect(reasoning.map((i) => i.encrypted_content), 'with include').to.have.length(2).and.satisfy((cs: unknown[]) => cs.every((c) => ENCRYPTED.test(String(c))));
    expect(reasoning[0].encrypted_content).to.equal(reasoningOf((await client.responses.retrieve(thought, { include: ['reasoning.encrypted_content'] })).output).encrypted_content);
    for (const e of asked) expectResponsesEvent(responsesEventForDocument(e as unknown as Item & { response?: unknown }));
    const included = await all(await client.responses.create({ model, input: 'Weather in Paris?', tools, background: true, stream: true, include: ['reasoning.encrypted_content'] }));
    expect(itemsOf(included).filter((i) => i.type === 'reasoning').map((i) => i.encrypted_content), 'asked at create: its own stream').to.have.length(2).and.satisfy((cs: unknown[]) => cs.every((c) => ENCRYPTED.test(String(c))));
    const replayed = await all(await client.responses.retrieve((included[0] as Event & { response: OpenAI.Responses.Response }).response.id, { stream: true }));
    expect(itemsOf(replayed).filter((i) => i.type === 'reasoning').every((i) => !('encrypted_content' in i)), 'replayed without include').to.equal(true);

    const probed = await all(await client.responses.create({ model: 'sim-chat', input: 'probabilities in the background', background: true, stream: true, include: ['message.output_text.logprobs'] }));
    const id = (probed[0] as Event & { response: OpenAI.Responses.Response }).response.id;
    expect(logprobsOf(probed).every((l) => Array.isArray(l) && l.length > 0), 'asked at create').to.equal(true);
    const without = await all(await client.responses.retrieve(id, { stream: true }));
    expect(logprobsOf(without).every((l) => Array.isArray(l) && l.length === 0), 'replayed without include: none').to.equal(true);
    expect(without.map((e) => e.type)).to.deep.equal(probed.map((e) => e.type));
    for (const e of without) expectResponsesEvent(responsesEventForDocument(e as unknown as Item & { response?: unknown }));
    expect(await all(await client.responses.retrieve(id, { stream: true, include: ['message.output_text.logprobs'] })), 'with include: as the create showed them').to.deep.equal(probed);
    expect(await all(await client.responses.retrieve(id, { stream: true, starting_after: 3, include: ['message.output_text.logprobs'] }))).to.deep.equal(probed.slice(4));
    const e = await refusal(client.responses.retrieve(id, { stream: true, include: ['reasoning.everything' as 'reasoning.encrypted_content'] }));
    expect([e!.status, e!.param, e!.code], 'an unknown value').to.deep.equal([400, 'include', 'invalid_request']);
  });

  it('an unknown include value: 400 naming include, on retrieve (also with stream) and input items', async () => {
    const r = await client.responses.create({ model: 'sim-chat', input: 'x' });
    const bad = ['reasoning.everything' as 'reasoning.encrypted_content'];
    for (const e of [
      await refusal(client.responses.retrieve(r.id, { include: bad })),
      await refusal(client.responses.retrieve(r.id, { include: bad, stream: true })),
      await refusal(client.responses.inputItems.list(r.id, { include: bad })),
    ]) {
      expect(e).to.be.instanceOf(OpenAI.BadRequestError);
      expect([e!.status, e!.param, e!.code]).to.deep.equal([400, 'include', 'invalid_request']);
    }
  });
});
