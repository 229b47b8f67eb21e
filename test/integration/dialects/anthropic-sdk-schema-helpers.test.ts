import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { betaZodOutputFormat, betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod';
import { zodOutputFormat } from '@anthropic-ai/sdk/helpers/zod';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { CONSTRUCTS } from '../../helpers/zod-schema-constructs';

const messages = [{ role: 'user' as const, content: 'hello' }];
const wire = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;
/** The recursive constructs' definition cycles as the helpers write them (zod's `__schemaN` names). */
const CIRCULAR: Record<string, string> = { recursive_getter: '__schema1 -> __schema2 -> __schema1', recursive_lazy: '__schema0 -> __schema0' };

/**
 * What @anthropic-ai/sdk 1.17's zod helpers write for every construct of CONSTRUCTS is served
 * through the gateway's input_schema check (api/routes/messages/input-schemas.ts): betaZodTool's
 * `input_schema` (zod 4's toJSONSchema, draft 2020-12 with its `$schema`, `$defs`/`$ref` for reused
 * and recursive parts, `oneOf` for a discriminated union and `allOf` for an intersection below the
 * root, which Anthropic refuses only at the top level) through the SDK's tool runner, and
 * zodOutputFormat / betaZodOutputFormat through messages.parse (`output_config.format`, the beta's
 * `output_format`), on an Anthropic-native and a translated upstream, but for a recursive construct,
 * whose self-referencing definitions Anthropic's structured outputs refuse (strict-schemas.ts); the
 * tools reach the native upstream as written.
 */
describe("Anthropic SDK zod helpers: every construct they write is served on /v1/messages", function () {
  this.timeout(120_000);
  const s = openaiOrg();
  let client: Anthropic;
  before(() => {
    client = new Anthropic({ apiKey: s.o.key, baseURL: env().gw.url, maxRetries: 0 });
  });

  it("betaZodTool tools of every construct are served by the SDK's tool runner, sent to an Anthropic upstream as written", async () => {
    const tools = CONSTRUCTS.map((c) => betaZodTool({ name: c.name, description: c.name, inputSchema: c.schema, run: () => 'done' }));
    for (const model of ['sim-claude', 'sim-chat']) {
      const final = await client.beta.messages.toolRunner({ model, max_tokens: 64, messages, tools });
      expect(final.type, model).to.equal('message');
    }
    const sent = env().sim.log.entries[0].body as { tools: Array<{ name: string; input_schema: unknown }> };
    expect(sent.tools.map((t) => t.input_schema), 'sent as written').to.deep.equal(tools.map((t) => wire((t as { input_schema: unknown }).input_schema)));
  });

  it("zodOutputFormat (output_config.format) and betaZodOutputFormat (output_format) of every construct are served and parsed, but a recursive one: Anthropic's refusal of circular definitions", async () => {
    for (const c of CONSTRUCTS) {
      env().sim.knobs.set('*', { replyWords: [JSON.stringify(c.sample)] });
      for (const model of ['sim-claude', 'sim-chat']) {
        const cycle = CIRCULAR[c.name];
        if (cycle) {
          // Anthropic's structured outputs refuse self-referencing definitions (api/routes/messages/strict-schemas.ts);
          // the SDK sends the beta's output_format as output_config.format too
          for (const sent of [
            () => client.messages.parse({ model, max_tokens: 64, messages, output_config: { format: zodOutputFormat(c.schema) } }),
            () => client.beta.messages.parse({ model, max_tokens: 64, messages, output_format: betaZodOutputFormat(c.schema) }),
          ]) {
            const err = await sent().catch((e: unknown) => e);
            expect(err, `${c.name} ${model}`).to.be.instanceOf(Anthropic.BadRequestError);
            const message = `output_config.format.schema: Circular reference detected in schema definitions: ${cycle}. Self-referencing or mutually-referencing definitions are not supported.`;
            expect((err as InstanceType<typeof Anthropic.BadRequestError>).error, `${c.name} ${model}`).to.deep.include({ error: { code: 'invalid_request', message, type: 'invalid_request_error' } });
          }
          continue;
        }
        const answer = await client.messages.parse({ model, max_tokens: 64, messages, output_config: { format: zodOutputFormat(c.schema) } });
        expect(answer.parsed_output, `${c.name} ${model}`).to.deep.equal(c.schema.parse(c.sample));
        const beta = await client.beta.messages.parse({ model, max_tokens: 64, messages, output_format: betaZodOutputFormat(c.schema) });
        expect(beta.parsed_output, `${c.name} ${model} beta`).to.deep.equal(c.schema.parse(c.sample));
      }
    }
  });
});
