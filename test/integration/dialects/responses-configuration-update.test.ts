import { expect } from 'chai';
import OpenAI from 'openai';
import { byStream, chunk, completion, usageChunk } from '../../helpers/scripted-upstream';
import { clientToolSuite } from '../../helpers/client-tools';
import { outcome } from '../../helpers/responses-background';

/**
 * OpenAI's `configuration_update` input item (openai 7.60.0's ResponseConfigurationUpdateItemParam:
 * "An update to the conversation's response configuration … Each setting stays in effect until a
 * later update replaces it"; Codex's ResponseItem has it): the last update's `reasoning.effort` and
 * `text.format` are the response's, over the request's own; the item says nothing to the model. Before,
 * it was refused 400 "Input item type 'configuration_update' is not supported." and the turn failed.
 */
type Sent = { messages: Array<{ role: string; content: unknown }>; reasoning_effort?: string; response_format?: { type: string; json_schema?: { name: string } } };

const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };

describe('Responses: configuration_update input items set the effort and format of the response', function () {
  this.timeout(30_000);
  const s = clientToolSuite();
  const sent = (i = 0) => s.up.received[i].body as Sent;

  it('the last update in the input decides the reasoning effort and the text format; nothing of it reaches the model as a message', async () => {
    s.up.otherwise = () => ({ kind: 'json', body: completion({ content: '{"a":"x"}' }, 'stop') });
    const input: OpenAI.Responses.ResponseInputItem[] = [
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'ok' },
      { type: 'configuration_update', reasoning: { effort: 'low' } },
      { role: 'user', content: 'second' },
      { type: 'configuration_update', reasoning: { effort: 'high' }, text: { format: { type: 'json_schema', name: 'answer', schema, strict: true } } },
      { role: 'user', content: 'third' },
    ];
    const r = await s.client.responses.create({ model: s.model, input, reasoning: { effort: 'medium' } });
    expect(r.status).to.equal('completed');
    expect(sent().reasoning_effort).to.equal('high');
    expect(sent().response_format).to.deep.include({ type: 'json_schema' });
    expect(sent().response_format!.json_schema).to.include({ name: 'answer' });
    expect(sent().messages.map((m) => [m.role, m.content])).to.deep.equal([
      ['user', 'first'],
      ['assistant', 'ok'],
      ['user', 'second'],
      ['user', 'third'],
    ]);
    // listed with the response's input items, as sent
    const items = await s.client.responses.inputItems.list(r.id, { order: 'asc' });
    expect(items.data.map((i) => i.type)).to.deep.equal(['message', 'message', 'configuration_update', 'message', 'configuration_update', 'message']);

    // an effort of null goes back to the model's default: none sent
    await s.client.responses.create({ model: s.model, input: [{ type: 'configuration_update', reasoning: { effort: null } }, { role: 'user', content: 'hi' }], reasoning: { effort: 'high' } });
    expect(sent(1)).not.to.have.property('reasoning_effort');
  });

  it('a compacted output keeps the configuration in effect (one configuration_update before the compaction item), and a response after it is made with it', async () => {
    s.up.otherwise = () => ({ kind: 'json', body: completion({ content: 'summary of it all' }, 'stop') });
    const compacted = await s.client.responses.compact({
      model: s.model,
      input: [
        { role: 'user', content: 'first' },
        { type: 'configuration_update', reasoning: { effort: 'low' }, text: { format: { type: 'json_schema', name: 'answer', schema, strict: true } } },
        { role: 'user', content: 'second' },
        { type: 'configuration_update', reasoning: { effort: 'high' } },
      ],
    });
    const types = compacted.output.map((i) => i.type);
    expect(types).to.deep.equal(['message', 'message', 'configuration_update', 'compaction']);
    const update = compacted.output[2] as unknown as Record<string, unknown>;
    expect(update).to.deep.include({ reasoning: { effort: 'high' } });
    expect((update.text as { format: { name: string } }).format.name).to.equal('answer');
    expect(update.id).to.be.a('string');
    // the next turn sends the compacted output back, then its new input: made with the kept effort and format
    s.up.reset();
    s.up.otherwise = () => ({ kind: 'json', body: completion({ content: '{"a":"y"}' }, 'stop') });
    const next = [...compacted.output, { role: 'user', content: 'third' }] as unknown as OpenAI.Responses.ResponseInputItem[];
    await s.client.responses.create({ model: s.model, input: next, reasoning: { effort: 'medium' } });
    expect(sent().reasoning_effort).to.equal('high');
    expect(sent().response_format!.json_schema).to.include({ name: 'answer' });
  });

  /** The effort and format the upstream got for request `i`, and those the Response echoes. */
  const made = (i: number) => [sent(i).reasoning_effort, sent(i).response_format?.json_schema?.name];
  const echoed = (r: OpenAI.Responses.Response) => [r.reasoning?.effort, r.text?.format?.type === 'json_schema' ? r.text.format.name : r.text?.format?.type];
  const update = (effort: 'low' | 'medium' | 'high', format?: 'answer'): OpenAI.Responses.ResponseInputItem =>
    ({ type: 'configuration_update', reasoning: { effort }, ...(format ? { text: { format: { type: 'json_schema', name: format, schema, strict: true } } } : {}) }) as OpenAI.Responses.ResponseInputItem;

  it('an update stays in effect across previous_response_id: the follow-ups are made with it and their Responses echo it; a later update of the effort alone keeps the format', async () => {
    s.up.otherwise = byStream(completion({ content: '{"a":"x"}' }, 'stop'), [chunk({ role: 'assistant', content: '{"a":"x"}' }), chunk({}, 'stop'), usageChunk()]);
    const first = await s.client.responses.create({ model: s.model, input: [update('high', 'answer'), { role: 'user', content: 'first' }], reasoning: { effort: 'low' } });
    expect(made(0)).to.deep.equal(['high', 'answer']);
    // the Response echoes what it was made with, not the request's own effort and format
    expect(echoed(first)).to.deep.equal(['high', 'answer']);

    // no update: the chain's is still in effect, over the request's own effort
    const second = await s.client.responses.create({ model: s.model, previous_response_id: first.id, input: 'second', reasoning: { effort: 'low' } });
    expect(made(1)).to.deep.equal(['high', 'answer']);
    expect(echoed(second)).to.deep.equal(['high', 'answer']);

    // an update of the effort alone: the format stays, in this response and the next (streamed: the same echo)
    const third = await s.client.responses.create({ model: s.model, previous_response_id: second.id, input: [update('medium'), { role: 'user', content: 'third' }] });
    expect(made(2)).to.deep.equal(['medium', 'answer']);
    expect(echoed(third)).to.deep.equal(['medium', 'answer']);
    const stream = s.client.responses.stream({ model: s.model, previous_response_id: third.id, input: 'fourth', reasoning: { effort: 'high' } });
    const fourth = await stream.finalResponse();
    expect(made(3)).to.deep.equal(['medium', 'answer']);
    expect(echoed(fourth)).to.deep.equal(['medium', 'answer']);
    // as stored, and a compaction of the chain keeps it
    expect(echoed(await s.client.responses.retrieve(fourth.id))).to.deep.equal(['medium', 'answer']);
    s.up.otherwise = () => ({ kind: 'json', body: completion({ content: 'summary' }, 'stop') });
    const compacted = await s.client.responses.compact({ model: s.model, previous_response_id: fourth.id });
    const kept = (compacted.output as Array<{ type: string }>).find((i) => i.type === 'configuration_update') as unknown as { reasoning: { effort: string }; text: { format: { name: string } } };
    expect([kept.reasoning.effort, kept.text.format.name]).to.deep.equal(['medium', 'answer']);
  });

  it("an update stays in effect in a conversation: the conversation's next responses are made with it and echo it; a later update of the effort alone keeps the format", async () => {
    s.up.otherwise = () => ({ kind: 'json', body: completion({ content: '{"a":"x"}' }, 'stop') });
    const conversation = (await s.client.conversations.create({})).id;
    const first = await s.client.responses.create({ model: s.model, conversation, input: [update('high', 'answer'), { role: 'user', content: 'first' }], reasoning: { effort: 'low' } });
    expect(made(0)).to.deep.equal(['high', 'answer']);
    expect(echoed(first)).to.deep.equal(['high', 'answer']);
    const second = await s.client.responses.create({ model: s.model, conversation, input: 'second', reasoning: { effort: 'low' } });
    expect(made(1)).to.deep.equal(['high', 'answer']);
    expect(echoed(second)).to.deep.equal(['high', 'answer']);
    await s.client.responses.create({ model: s.model, conversation, input: [update('medium'), { role: 'user', content: 'third' }] });
    expect(made(2)).to.deep.equal(['medium', 'answer']);
    const fourth = await s.client.responses.create({ model: s.model, conversation, input: 'fourth' });
    expect(made(3)).to.deep.equal(['medium', 'answer']);
    expect(echoed(fourth)).to.deep.equal(['medium', 'answer']);
    // the updates are in the conversation's items, as sent; nothing of them reached the model as a message
    const items = await s.client.conversations.items.list(conversation, { order: 'asc' });
    expect(items.data.filter((i) => (i as { type: string }).type === ('configuration_update' as string))).to.have.length(2);
    expect(sent(3).messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user']);
  });

  it('an update with a value OpenAI does not take is refused 400 naming it, before anything is sent', async () => {
    const bad = await outcome(s.client.responses.create({ model: s.model, input: [{ role: 'user', content: 'hi' }, { type: 'configuration_update', reasoning: { effort: 'extreme' as 'high' } }] }));
    expect(bad).to.be.instanceOf(OpenAI.BadRequestError);
    expect((bad as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('input[1].reasoning.effort');
    const noSchema = await outcome(s.client.responses.create({ model: s.model, input: [{ type: 'configuration_update', text: { format: { type: 'json_schema', name: 'x' } as never } }, { role: 'user', content: 'hi' }] }));
    expect((noSchema as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('input[0].text.format.schema');
    expect(s.up.received).to.have.length(0);
  });
});
