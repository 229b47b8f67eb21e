import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env } from '../../helpers/harness';
import { lastSent } from '../../helpers/openai-org';
import { call } from '../../helpers/http';
import { outcome } from '../../helpers/responses-background';
import { billedEvents } from '../../helpers/usage';
import { EVERY_UPSTREAM_KIND, everyUpstreamKind, expectRefusal } from '../../helpers/messages-every-upstream';

const msgs = [{ role: 'user', content: 'hello' }];
/** A valid tool and a server tool first, so that the refusal names the third: tools.2. */
const ok = { name: 'ok_tool', description: 'fine', input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } };
const SEARCH = { type: 'web_search_20250305', name: 'web_search', max_uses: 1 };
const OK2 = { name: 'ok_too', type: 'custom', input_schema: { type: 'object' } };
const INVALID =
  'tools.2.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12). Learn more about tool use at https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview.';
const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

/** Claude Code's tools as it sends them (zod schemas written as draft-07 JSON Schema). */
const CLAUDE_CODE_TOOLS = [
  {
    name: 'Bash',
    description: 'Executes a given bash command',
    input_schema: {
      type: 'object',
      properties: { command: { type: 'string', description: 'The command to execute' }, timeout: { type: 'number', description: 'Optional timeout in milliseconds (max 600000)' }, description: { type: 'string' }, run_in_background: { type: 'boolean' } },
      required: ['command'],
      additionalProperties: false,
      $schema: DRAFT_07,
    },
  },
  {
    name: 'Grep',
    description: 'A powerful search tool built on ripgrep',
    input_schema: {
      type: 'object',
      properties: {
        pattern: { type: 'string' },
        output_mode: { type: 'string', enum: ['content', 'files_with_matches', 'count'] },
        '-A': { type: 'number' },
        head_limit: { type: 'number' },
      },
      required: ['pattern'],
      additionalProperties: false,
      $schema: DRAFT_07,
    },
  },
  {
    name: 'MultiEdit',
    description: 'Makes several edits to one file',
    input_schema: {
      type: 'object',
      properties: {
        file_path: { type: 'string' },
        edits: {
          type: 'array',
          items: { type: 'object', properties: { old_string: { type: 'string' }, new_string: { type: 'string' }, replace_all: { type: 'boolean', default: false } }, required: ['old_string', 'new_string'], additionalProperties: false },
          minItems: 1,
        },
      },
      required: ['file_path', 'edits'],
      additionalProperties: false,
      $schema: DRAFT_07,
    },
  },
  {
    name: 'TodoWrite',
    description: 'Writes the todo list',
    input_schema: {
      type: 'object',
      properties: {
        todos: {
          type: 'array',
          items: {
            type: 'object',
            properties: { content: { type: 'string', minLength: 1 }, status: { type: 'string', enum: ['pending', 'in_progress', 'completed'] }, activeForm: { type: 'string', minLength: 1 } },
            required: ['content', 'status', 'activeForm'],
            additionalProperties: false,
          },
        },
      },
      required: ['todos'],
      additionalProperties: false,
      $schema: DRAFT_07,
    },
  },
  { name: 'WebFetch', description: 'Fetches a page', input_schema: { type: 'object', properties: { url: { type: 'string', format: 'uri' }, prompt: { type: 'string' } }, required: ['url', 'prompt'], additionalProperties: false, $schema: DRAFT_07 } },
  // an MCP tool without parameters, and one with 2020-12 keywords
  { name: 'mcp__srv__ping', description: 'Pings', input_schema: { type: 'object' } },
  { name: 'mcp__srv__pair', input_schema: { type: 'object', properties: { p: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false }, n: { type: ['string', 'null'], exclusiveMinimum: 0 } }, $defs: { x: { type: 'string' } } } },
  { name: 'nullable_fields', input_schema: { type: 'object', properties: null, required: null } },
  // what openclaw issue 98588 found Anthropic takes: patternProperties, anyOf with null, {} subschemas, a dangling $ref, const
  {
    name: 'lenient',
    input_schema: { type: 'object', patternProperties: { '^x-': { type: 'string' } }, properties: { o: { anyOf: [{ type: 'string' }, { type: 'null' }] }, any: {}, ref: { $ref: '#/$defs/missing' }, k: { const: 'v' } } },
  },
];

/**
 * A custom tool's `input_schema` that Anthropic refuses (api/routes/messages/input-schemas.ts): 400
 * invalid_request_error in its words naming `tools.N.custom.input_schema`, on every upstream kind
 * (OpenAI-compatible, Anthropic-native, Gemini, Bedrock), JSON, streamed and on count_tokens, before
 * any upstream call or bill. Before, the simulator was sent it and answered.
 */
describe("messages: a custom tool's input_schema that is not a JSON Schema (Anthropic's refusals)", function () {
  this.timeout(120_000);
  const { s, headers } = everyUpstreamKind();
  const models = EVERY_UPSTREAM_KIND;

  const refused: Array<[string, unknown, string]> = [
    ['bad_type', { type: 'object', properties: { city: { type: 'strin' } } }, INVALID],
    ['bad_items', { type: 'object', properties: { list: { type: 'array', items: 3 } } }, INVALID],
    ['bad_required', { type: 'object', properties: { a: { type: 'string' } }, required: 'a' }, INVALID],
    ['draft3_required', { type: 'object', properties: { a: { type: 'string', required: true } } }, INVALID],
    ['bad_min', { type: 'object', properties: { a: { type: 'string', minLength: -1 } } }, INVALID],
    // draft-07's tuple form is not draft 2020-12 (prefixItems is)
    ['tuple_items', { type: 'object', properties: { p: { type: 'array', items: [{ type: 'string' }] } } }, INVALID],
    ['no_type', { properties: { a: { type: 'string' } } }, 'tools.2.custom.input_schema.type: Field required'],
    ['string_root', { type: 'string' }, "tools.2.custom.input_schema.type: Input should be 'object'"],
    ['union_root', { type: 'object', anyOf: [{ properties: { a: { type: 'string' } } }, { properties: { b: { type: 'string' } } }] }, 'tools.2.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level'],
  ];

  it("an input_schema Anthropic refuses is its 400 invalid_request_error in its words on every upstream kind, JSON, streamed and counted; nothing sent or billed", async () => {
    const before = await billedEvents(s.o.org.id);
    for (const model of models) {
      for (const [name, input_schema, message] of refused) {
        // with a server tool (the gateway's search loop) and with custom tools only (a native upstream's bypass)
        for (const second of [SEARCH, OK2]) {
          const tools = [ok, second, { name, input_schema }];
          for (const stream of [false, true]) {
            expectRefusal(await call('POST', '/v1/messages', { headers: headers(), json: { model, max_tokens: 64, messages: msgs, stream, tools } }), message, `${model} ${name} ${second.name} stream ${stream}`);
          }
        }
        const tools = [ok, SEARCH, { name, input_schema }];
        expectRefusal(await call('POST', '/v1/messages/count_tokens', { headers: headers(), json: { model, messages: msgs, tools } }), message, `count_tokens ${model} ${name}`);
      }
    }
    // a wrong root type is named before an invalid schema earlier in the list, as Anthropic's field validation runs first
    const both = await call('POST', '/v1/messages', { headers: headers(), json: { model: 'sim-claude', max_tokens: 64, messages: msgs, tools: [ok, SEARCH, { name: 'a', input_schema: refused[0][1] }, { name: 'b', input_schema: { type: 'array' } }] } });
    expectRefusal(both, "tools.3.custom.input_schema.type: Input should be 'object'", 'type before schema');
    // the official SDK raises its BadRequestError with Anthropic's type and words
    const client = new Anthropic({ apiKey: s.o.key, baseURL: env().gw.url, maxRetries: 0 });
    for (const model of ['sim-claude', 'sim-chat']) {
      const tools = [ok, SEARCH, { name: 'bad_type', input_schema: refused[0][1] }] as Anthropic.ToolUnion[];
      const err = await outcome(client.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], tools }));
      expect(err, model).to.be.instanceOf(Anthropic.BadRequestError);
      expect((err as InstanceType<typeof Anthropic.BadRequestError>).error, model).to.deep.include({ error: { code: 'invalid_request', message: INVALID, type: 'invalid_request_error' } });
      const counted = await outcome(client.messages.countTokens({ model, messages: [{ role: 'user', content: 'hi' }], tools }));
      expect(counted, `count_tokens ${model}`).to.be.instanceOf(Anthropic.BadRequestError);
      const streamed = await outcome(client.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], tools }).finalMessage());
      expect(streamed, `stream ${model}`).to.be.instanceOf(Anthropic.BadRequestError);
    }
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billedEvents(s.o.org.id), 'nothing billed').to.equal(before);
  });

  it("Claude Code's tools (draft-07 $schema), a bare object schema, 2020-12 keywords and null properties are served on every upstream kind, through the SDK too", async () => {
    const client = new Anthropic({ apiKey: s.o.key, baseURL: env().gw.url, maxRetries: 0 });
    const tools = CLAUDE_CODE_TOOLS as Anthropic.Tool[];
    for (const model of models) {
      for (const stream of [false, true]) {
        const r = await call('POST', '/v1/messages', { headers: headers(), json: { model, max_tokens: 64, messages: msgs, stream, tools } });
        expect(r.status, `${model} stream ${stream} ${r.text}`).to.equal(200);
      }
      const counted = await call('POST', '/v1/messages/count_tokens', { headers: headers(), json: { model, messages: msgs, tools } });
      expect(counted.status, `count_tokens ${model} ${counted.text}`).to.equal(200);
      const answer = await client.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], tools });
      expect(answer.type, model).to.equal('message');
      expect(lastSent(), `${model}: the tools went upstream`).to.include('TodoWrite');
    }
  });
});
