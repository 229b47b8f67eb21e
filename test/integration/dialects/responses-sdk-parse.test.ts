import { expect } from 'chai';
import { z } from 'zod';
import { zodTextFormat } from 'openai/helpers/zod';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';

const Animal = z.object({ name: z.string(), legs: z.number() });
const format = zodTextFormat(Animal, 'animal');

/**
 * The official SDK's structured-output helpers end to end: `responses.parse` and `responses.stream`
 * with a zod `text.format` (openai/helpers/zod) reach the upstream as chat's JSON-schema
 * `response_format` (strict, the schema the helper made) and come back parsed (`output_parsed`,
 * each output_text part's `parsed`), on an OpenAI-compatible and an Anthropic-native upstream.
 */
describe("responses dialect: the SDK's parse and stream with a zod text format", () => {
  const s = openaiOrg();

  for (const model of ['sim-chat', 'sim-claude']) {
    it(`${model}: responses.parse answers output_parsed, the format echoed; responses.stream's final response is parsed too`, async () => {
      env().sim.knobs.set('*', { replyWords: ['{"name":"Owl","legs":2}'] });
      const r = await s.c.responses.parse({ model, input: 'Name an animal.', text: { format } });
      expect(r.status).to.equal('completed');
      expect(r.output_parsed).to.deep.equal({ name: 'Owl', legs: 2 });
      expect(r.text?.format).to.deep.include({ type: 'json_schema', name: 'animal', strict: true });
      const sent = env().sim.log.entries.at(-1)!;
      if (model === 'sim-chat') {
        const rf = (sent.body as { response_format: { type: string; json_schema: { name: string; strict: boolean; schema: unknown } } }).response_format;
        expect(rf.type).to.equal('json_schema');
        expect(rf.json_schema).to.deep.include({ name: 'animal', strict: true, schema: format.schema });
      }

      const events: string[] = [];
      const stream = s.c.responses.stream({ model, input: 'Name an animal.', text: { format } });
      stream.on('event', (e) => events.push(e.type));
      const final = await stream.finalResponse();
      expect(final.output_parsed).to.deep.equal({ name: 'Owl', legs: 2 });
      const part = final.output.flatMap((i) => (i.type === 'message' ? i.content : [])).find((p) => p.type === 'output_text');
      expect(part && 'parsed' in part ? part.parsed : undefined).to.deep.equal({ name: 'Owl', legs: 2 });
      expect(events[0]).to.equal('response.created');
      expect(events.at(-1)).to.equal('response.completed');
    });
  }
});
