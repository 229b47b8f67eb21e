import { expect } from 'chai';
import OpenAI from 'openai';
import { completion } from '../../helpers/scripted-upstream';
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

  it('an update with a value OpenAI does not take is refused 400 naming it, before anything is sent', async () => {
    const bad = await outcome(s.client.responses.create({ model: s.model, input: [{ role: 'user', content: 'hi' }, { type: 'configuration_update', reasoning: { effort: 'extreme' as 'high' } }] }));
    expect(bad).to.be.instanceOf(OpenAI.BadRequestError);
    expect((bad as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('input[1].reasoning.effort');
    const noSchema = await outcome(s.client.responses.create({ model: s.model, input: [{ type: 'configuration_update', text: { format: { type: 'json_schema', name: 'x' } as never } }, { role: 'user', content: 'hi' }] }));
    expect((noSchema as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('input[0].text.format.schema');
    expect(s.up.received).to.have.length(0);
  });
});
