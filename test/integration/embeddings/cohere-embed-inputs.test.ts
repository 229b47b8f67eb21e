import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { expectCohere } from '../../helpers/conformance';
import { UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';
import { expectRejected, post, suiteClients } from './helpers';

/**
 * Cohere's v2 embed `inputs` (`[{content: [{type: 'text', text}]}]`): the shape Cohere's own Python
 * example for texts sends (its document's /v2/embed "Texts" sample). Text parts are served; images are not.
 */
describe('POST /v2/embed with inputs (Cohere v2 embed, text content)', () => {
  const c = suiteClients();

  it("embeds each input's text parts as one text (joined by a newline), one embedding an input, every type asked; texts [] and billed once", async () => {
    const r = await c.cohere.embed({
      model: 'sim-embed',
      inputType: 'classification',
      inputs: [{ content: [{ type: 'text', text: 'hello' }, { type: 'text', text: 'goodbye' }] }, { content: [{ type: 'text', text: 'a second input' }] }],
      embeddingTypes: ['float', 'base64'],
    });
    expect(r.embeddings.float).to.have.length(2);
    expect(r.embeddings.base64).to.have.length(2);
    expect(r.texts, 'no texts were sent').to.deep.equal([]);
    expect(env().sim.log.entries.at(-1)!.body).to.deep.include({ input: ['hello\ngoodbye', 'a second input'] });
    const same = await c.openai.embeddings.create({ model: 'sim-embed', input: ['hello\ngoodbye', 'a second input'], encoding_format: 'float' });
    r.embeddings.float!.forEach((v, i) => expect(v).to.deep.equal(same.data[i].embedding));
    expect(r.meta?.billedUnits?.inputTokens).to.equal(same.usage.prompt_tokens);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: r.id } }), 'one usage event').to.equal(1);

    const raw = await post(c.o.key, '/v2/embed', { model: 'sim-embed', input_type: 'search_query', inputs: [{ content: [{ type: 'text', text: 'raw' }] }] });
    expect(raw.status, raw.text).to.equal(200);
    expect(raw.body).to.include({ response_type: 'embeddings_by_type' });
    expectCohere('/v2/embed', 200, { ...raw.body, api_version: raw.body.meta.api_version });
  });

  it('refuses images, both texts and inputs, and malformed inputs, 400 naming the part; an input past the limit is input_too_long naming it; nothing sent or billed', async () => {
    const base = { model: 'sim-embed', input_type: 'search_document' };
    const text = (t: string) => ({ content: [{ type: 'text', text: t }] });
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ ...base, inputs: [text('x'), { content: [{ type: 'text', text: 'y' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }] }, 'invalid_input', "'inputs[1].content[1]' is an image"],
      [{ ...base, texts: ['x'], inputs: [text('x')] }, 'invalid_input', "'texts' and 'inputs' are both given"],
      [{ ...base, inputs: [] }, 'invalid_input', "'inputs' must not be empty"],
      [{ ...base, inputs: Array.from({ length: 97 }, () => text('a')) }, 'batch_too_large', 'at most 96'],
      [{ ...base, inputs: 'x' }, 'invalid_input', "'inputs' must be an array"],
      [{ ...base, inputs: ['x'] }, 'invalid_input', "'inputs[0]' must be an object"],
      [{ ...base, inputs: [{}] }, 'invalid_input', "'inputs[0].content' must be an array"],
      [{ ...base, inputs: [{ content: [] }] }, 'invalid_input', "'inputs[0].content' must not be empty"],
      [{ ...base, inputs: [{ content: [{ type: 'audio' }] }] }, 'invalid_input', "'inputs[0].content[0].type' must be 'text', not \"audio\""],
      [{ ...base, inputs: [{ content: [{ type: 'text', text: '' }] }] }, 'invalid_input', "'inputs[0].content[0].text' must be a non-empty string"],
      [{ ...base, inputs: [text('short'), text('word '.repeat(20_000))] }, 'input_too_long', "'inputs[1]' is longer than the model's limit"],
      [{ ...base, inputs: [text('a text of rather more than three tokens')], max_tokens: 3 }, 'input_too_long', "'inputs[0]' is longer than 'max_tokens'"],
      [{ model: 'sim-embed', inputs: [text('x')] }, 'invalid_input', "'input_type' is required"],
    ];
    for (const [body, code, says] of cases) {
      const r = await post(c.o.key, '/v2/embed', body);
      await expectRejected(r, 400, code);
      expect(r.body.error.message, JSON.stringify(body).slice(0, 200)).to.include(says);
    }
    // Cohere's v1 embed has no `inputs`
    await expectRejected(await post(c.o.key, '/v1/embed', { model: 'sim-embed', inputs: [text('x')] }), 400, 'unknown_field');
    expect(env().sim.log.entries, 'nothing reached the upstream').to.have.length(0);
  });
});
