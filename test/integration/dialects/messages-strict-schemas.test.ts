import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod';
import * as z from 'zod/v4';
import { env } from '../../helpers/harness';
import { lastSent } from '../../helpers/openai-org';
import { call } from '../../helpers/http';
import { outcome } from '../../helpers/responses-background';
import { billedEvents } from '../../helpers/usage';
import { EVERY_UPSTREAM_KIND, everyUpstreamKind, expectRefusal } from '../../helpers/messages-every-upstream';

const msgs = [{ role: 'user', content: 'hello' }];
const ok = { name: 'ok_tool', description: 'fine', input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } };
const SEARCH = { type: 'web_search_20250305', name: 'web_search', max_uses: 1 };
/** A closed object of one property, as Anthropic's structured outputs take it. */
const closed = (prop: Record<string, unknown>) => ({ type: 'object', properties: { p: prop }, required: ['p'], additionalProperties: false });
/** A strict tool of `n` optional string parameters, or of `n` nullable required ones (union-typed). */
const optionalTool = (name: string, n: number) => ({
  name,
  strict: true,
  input_schema: { type: 'object', properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`o${i}`, { type: 'string' }])), additionalProperties: false },
});
const unionTool = (name: string, n: number) => {
  const keys = Array.from({ length: n }, (_, i) => `u${i}`);
  const props = Object.fromEntries(keys.map((k, i) => [k, i % 2 ? { type: ['string', 'null'] } : { anyOf: [{ type: 'string' }, { type: 'null' }] }]));
  return { name, strict: true, input_schema: { type: 'object', properties: props, required: keys, additionalProperties: false } };
};

/** Schemas Anthropic's structured outputs refuse, and its words after the place (api/routes/messages/strict-schemas.ts). */
const REFUSED: Array<[string, Record<string, unknown>, string]> = [
  ['not_closed', { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, "For 'object' type, 'additionalProperties' must be explicitly set to false"],
  ['nested_open', closed({ type: 'object', properties: {}, additionalProperties: true }), "For 'object' type, 'additionalProperties: true' is not supported. Please set 'additionalProperties' to false"],
  ['map', closed({ type: 'object', additionalProperties: { type: 'string' } }), "For 'object' type, 'additionalProperties: object' is not supported. Please set 'additionalProperties' to false"],
  ['int_bounds', closed({ type: 'integer', minimum: 0, maximum: 10 }), "For 'integer' type, properties maximum, minimum are not supported"],
  ['exclusive', closed({ type: ['number', 'null'], exclusiveMinimum: 0 }), "For 'number' type, property 'exclusiveMinimum' is not supported"],
  ['min_items', closed({ type: 'array', items: { type: 'string' }, minItems: 2 }), "For 'array' type, 'minItems' values other than 0 or 1 are not supported"],
  ['max_items', closed({ type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 5 }), "For 'array' type, property 'maxItems' is not supported"],
  ['untyped', closed({ default: null, title: 'Value' }), "Invalid schema: Schema type is missing for schema: {'default': None, 'title': 'Value'}"],
  ['one_of', closed({ oneOf: [{ type: 'string' }, { type: 'number' }] }), "Schema type 'oneOf' is not supported"],
  [
    'self_ref',
    { ...closed({ $ref: '#/$defs/node' }), $defs: { node: closed({ anyOf: [{ $ref: '#/$defs/node' }, { type: 'null' }] }) } },
    'Circular reference detected in schema definitions: node -> node. Self-referencing or mutually-referencing definitions are not supported.',
  ],
  [
    'mutual_refs',
    { ...closed({ $ref: '#/$defs/leaf' }), $defs: { leaf: { type: 'string' }, a: closed({ type: 'array', items: { $ref: '#/$defs/b' } }), b: closed({ $ref: '#/$defs/a' }) } },
    'Circular reference detected in schema definitions: a -> b -> a. Self-referencing or mutually-referencing definitions are not supported.',
  ],
  ['in_defs', { ...closed({ $ref: '#/$defs/n' }), $defs: { n: { type: 'number', multipleOf: 5 } } }, "For 'number' type, property 'multipleOf' is not supported"],
];

/** What Anthropic's structured outputs take: string constraints, formats, patterns, nullable unions, minItems 1, refs, enums. */
const SERVED_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 40, pattern: '^[a-z]+$' },
    when: { type: 'string', format: 'date-time' },
    maybe: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
    either: { type: ['string', 'null'] },
    list: { type: 'array', items: { $ref: '#/$defs/item' }, minItems: 1 },
    kind: { enum: ['a', 'b'] },
    fixed: { const: 'x' },
    note: { type: 'string', default: '' },
  },
  required: ['name', 'when', 'maybe', 'either', 'list', 'kind', 'fixed'],
  additionalProperties: false,
  $defs: { item: { type: 'object', properties: { v: { type: 'boolean' } }, required: ['v'], additionalProperties: false } },
};

/** Claude Code's strict tools as its strict check writes them (every object closed, no bounds; 2.1.332). */
const CLAUDE_CODE_STRICT = [
  {
    name: 'Bash',
    strict: true,
    input_schema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { command: { type: 'string' }, timeout: { type: 'number', description: 'Optional timeout in milliseconds (max 600000)' }, description: { type: 'string' }, run_in_background: { type: 'boolean' }, dangerouslyDisableSandbox: { type: 'boolean' } },
      required: ['command'],
      additionalProperties: false,
    },
  },
  {
    name: 'Edit',
    strict: true,
    input_schema: {
      type: 'object',
      properties: { file_path: { type: 'string' }, old_string: { type: 'string' }, new_string: { type: 'string' }, replace_all: { type: 'boolean', default: false } },
      required: ['file_path', 'old_string', 'new_string'],
      additionalProperties: false,
    },
  },
  { name: 'Write', strict: true, input_schema: { type: 'object', properties: { file_path: { type: 'string' }, content: { type: 'string' } }, required: ['file_path', 'content'], additionalProperties: false } },
];

/**
 * A strict tool's or the output format's schema Anthropic's structured outputs refuse
 * (api/routes/messages/strict-schemas.ts): 400 invalid_request_error in its words, on every upstream
 * kind, JSON and streamed, the schema rules on count_tokens too, before any upstream call or bill.
 * Before, a translated upstream was sent it (and served it or refused it in its own words).
 */
describe("messages: strict tools' and output formats' schemas Anthropic's structured outputs refuse", function () {
  this.timeout(180_000);
  const { s, headers } = everyUpstreamKind();
  const models = EVERY_UPSTREAM_KIND;
  const post = (json: Record<string, unknown>) => call('POST', '/v1/messages', { headers: headers(), json });
  const count = (json: Record<string, unknown>) => call('POST', '/v1/messages/count_tokens', { headers: headers(), json });

  it('a strict tool, output_config.format or output_format schema Anthropic refuses is its 400 in its words on every upstream kind, JSON, streamed and counted; nothing sent or billed', async () => {
    const before = await billedEvents(s.o.org.id);
    for (const model of models) {
      for (const [name, schema, words] of REFUSED) {
        const asTool = { tools: [ok, SEARCH, { name, input_schema: schema, strict: true }] };
        const asFormat = { output_config: { format: { type: 'json_schema', schema } } };
        const asBeta = { output_format: { type: 'json_schema', schema } };
        const cases: Array<[Record<string, unknown>, string]> = [
          [asTool, `tools.2.custom: ${words}`],
          [asFormat, `output_config.format.schema: ${words}`],
          [asBeta, `output_format.schema: ${words}`],
        ];
        for (const [fields, message] of cases) {
          for (const stream of [false, true]) expectRefusal(await post({ model, max_tokens: 64, messages: msgs, stream, ...fields }), message, `${model} ${name} ${message} stream ${stream}`);
          expectRefusal(await count({ model, messages: msgs, ...fields }), message, `count_tokens ${model} ${name} ${message}`);
        }
      }
    }
    // the official SDK raises its BadRequestError with Anthropic's words
    const client = new Anthropic({ apiKey: s.o.key, baseURL: env().gw.url, maxRetries: 0 });
    const err = await outcome(client.messages.create({ model: 'sim-chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], output_config: { format: { type: 'json_schema', schema: REFUSED[0][1] } } }));
    expect(err).to.be.instanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).error).to.deep.include({ error: { code: 'invalid_request', message: `output_config.format.schema: ${REFUSED[0][2]}`, type: 'invalid_request_error' } });
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billedEvents(s.o.org.id), 'nothing billed').to.equal(before);
  });

  it("more than 20 strict tools, 16 union-typed or 24 optional parameters across the strict schemas are Anthropic's 400 on every upstream kind (not on count_tokens)", async () => {
    const strictTools = Array.from({ length: 21 }, (_, i) => ({ name: `t${i}`, strict: true, input_schema: closed({ type: 'string' }) }));
    const limits: Array<[Record<string, unknown>, string]> = [
      [{ tools: strictTools }, 'Too many strict tools (21). The maximum number of strict tools supported is 20. Try reducing the number of tools marked as strict.'],
      // counted across the tools and the output schema
      [
        { tools: [unionTool('a', 10)], output_config: { format: { type: 'json_schema', schema: unionTool('b', 7).input_schema } } },
        'Schemas contains too many parameters with union types (17 parameters with type arrays or anyOf). This causes exponential compilation cost. Reduce the number of nullable or union-typed parameters (limit: 16 parameters with unions).',
      ],
      [
        { tools: [optionalTool('a', 20), { ...optionalTool('loose', 30), strict: false }], output_format: { type: 'json_schema', schema: optionalTool('b', 5).input_schema } },
        'Schemas contains too many optional parameters (25), which would make grammar compilation inefficient. Reduce the number of optional parameters in your tool schemas (limit: 24).',
      ],
      // unions are answered before optional parameters
      [{ tools: [unionTool('a', 17), optionalTool('b', 25)] }, 'Schemas contains too many parameters with union types (17 parameters with type arrays or anyOf). This causes exponential compilation cost. Reduce the number of nullable or union-typed parameters (limit: 16 parameters with unions).'],
    ];
    for (const model of models) {
      for (const [fields, message] of limits) {
        for (const stream of [false, true]) expectRefusal(await post({ model, max_tokens: 64, messages: msgs, stream, ...fields }), message, `${model} ${message.slice(0, 30)} stream ${stream}`);
        const counted = await count({ model, messages: msgs, ...fields });
        expect(counted.status, `count_tokens ${model} ${counted.text}`).to.equal(200);
      }
    }
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
  });

  it("what the structured outputs take is served on every upstream kind: string constraints, formats, nullable unions, refs, Claude Code's strict tools, the limits themselves, bounds on a non-strict tool", async () => {
    const atLimits = [...Array.from({ length: 17 }, (_, i) => ({ name: `t${i}`, strict: true, input_schema: closed({ type: 'string' }) })), optionalTool('o', 24), unionTool('u', 16)];
    const bodies: Array<[string, Record<string, unknown>]> = [
      ['strict tool', { tools: [ok, { name: 'rich', strict: true, input_schema: SERVED_SCHEMA }] }],
      ['output_config.format', { output_config: { format: { type: 'json_schema', schema: SERVED_SCHEMA } } }],
      ['output_format', { output_format: { type: 'json_schema', schema: SERVED_SCHEMA } }],
      ['Claude Code', { tools: CLAUDE_CODE_STRICT }],
      ['at the limits', { tools: atLimits }],
      ['non-strict bounds', { tools: [{ name: 'loose', input_schema: { type: 'object', properties: { n: { type: 'integer', minimum: 0 }, m: { type: 'object' } } } }] }],
    ];
    for (const model of models) {
      for (const [what, fields] of bodies) {
        for (const stream of [false, true]) {
          const r = await post({ model, max_tokens: 64, messages: msgs, stream, ...fields });
          expect(r.status, `${model} ${what} stream ${stream} ${r.text}`).to.equal(200);
        }
        const counted = await count({ model, messages: msgs, ...fields });
        expect(counted.status, `count_tokens ${model} ${what} ${counted.text}`).to.equal(200);
      }
      expect(lastSent(), `${model}: the tools went upstream`).to.include('loose');
    }
  });

  it("betaZodTool with strict: true (sent as zod writes it: the SDK transforms output formats, not tools): closed objects are served by the tool runner, z.int()'s safe-integer bounds are Anthropic's refusal", async () => {
    const client = new Anthropic({ apiKey: s.o.key, baseURL: env().gw.url, maxRetries: 0 });
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const served = betaZodTool({ name: 'plan', description: 'plans', strict: true, inputSchema: z.object({ city: z.string(), days: z.number().optional(), tags: z.array(z.string()), mode: z.enum(['a', 'b']) }), run: () => 'done' });
    const bounded = betaZodTool({ name: 'count', description: 'counts', strict: true, inputSchema: z.object({ n: z.int() }), run: () => 'done' });
    for (const model of ['sim-claude', 'sim-chat']) {
      const final = await client.beta.messages.toolRunner({ model, max_tokens: 64, messages, tools: [served] });
      expect(final.type, model).to.equal('message');
      const err = await outcome(client.beta.messages.toolRunner({ model, max_tokens: 64, messages, tools: [served, bounded] }).runUntilDone());
      expect(err, model).to.be.instanceOf(Anthropic.BadRequestError);
      expect((err as InstanceType<typeof Anthropic.BadRequestError>).error, model).to.deep.include({ error: { code: 'invalid_request', message: "tools.1.custom: For 'integer' type, properties maximum, minimum are not supported", type: 'invalid_request_error' } });
    }
  });
});
