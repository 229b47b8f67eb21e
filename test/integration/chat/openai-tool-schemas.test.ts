import { expect } from 'chai';
import OpenAI from 'openai';
import { zodFunction, zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { expectOpenAI } from '../../helpers/conformance';
import { outcome } from '../../helpers/responses-background';
import { billedEvents } from '../../helpers/usage';
import { useGeminiModels } from '../../helpers/gemini-model';
import { metaBreaks, notSchemas, strictBreaks } from '../../helpers/tool-schema-cases';

const msgs = [{ role: 'user' as const, content: 'hello' }];
const fn = (name: string, parameters: unknown, strict?: boolean) => ({ type: 'function', function: { name, parameters, ...(strict === undefined ? {} : { strict }) } });
/** A valid tool first, so that the refusal names the second: tools[1]. */
const ok = fn('ok_tool', { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] });
const format = (name: string, schema: unknown, strict?: boolean | null) => ({ type: 'json_schema', json_schema: { name, schema, ...(strict === undefined ? {} : { strict }) } });

/**
 * Function tools whose `parameters` OpenAI refuses (shared/json-schema/tool-schemas.ts): 400
 * invalid_request_error `invalid_function_parameters` naming `tools[N].function.parameters`, "Invalid
 * schema for function '<name>': ...", in its words, on every upstream kind, JSON and streamed, before
 * any upstream call or bill. Before, such a schema went to an OpenAI-compatible upstream (the
 * simulator answered) or was translated to Anthropic and Gemini (the simulator answered too).
 *
 * A json_schema response format whose `schema` OpenAI refuses (refuseInvalidResponseSchema): 400
 * `invalid_json_schema` naming `response_format`, "Invalid schema for response_format '<name>':
 * ...", the same reasons: not a JSON Schema with or without strict, the Structured Outputs rules
 * (object root, additionalProperties false, every property required, keywords it does not permit)
 * with `strict: true` only.
 */
describe('OpenAI refusals: invalid function tool and response format schemas (invalid_function_parameters, invalid_json_schema)', function () {
  this.timeout(60_000);
  const s = openaiOrg();
  useGeminiModels();
  const models = ['sim-chat', 'sim-claude', 'test-gemini'];
  const post = (json: Record<string, unknown>) => call('POST', '/v1/chat/completions', { headers: keyHeader(s.o.key), json });
  const billed = () => billedEvents(s.o.org.id);

  function expectRefusal(r: Reply, name: string, why: string, what: string): void {
    expectError(r, { code: 'invalid_function_parameters', message: `Invalid schema for function '${name}': ${why}`, param: 'tools[1].function.parameters' }, what);
  }
  function expectFormatRefusal(r: Reply, name: string, why: string, what: string): void {
    expectError(r, { code: 'invalid_json_schema', message: `Invalid schema for response_format '${name}': ${why}`, param: 'response_format' }, what);
  }
  function expectError(r: Reply, error: { code: string; message: string; param: string }, what: string): void {
    expect(r.status, `${what} ${r.text}`).to.equal(400);
    expect(r.body.error, what).to.deep.equal({ code: error.code, message: error.message, type: 'invalid_request_error', param: error.param });
    expectOpenAI('ErrorResponse', r.body);
  }

  it("a parameters that is not a JSON Schema, or not an object schema, is OpenAI's 400 invalid_function_parameters on every upstream kind, JSON and streamed; nothing sent or billed", async () => {
    const before = await billed();
    for (const model of models) {
      for (const [name, parameters, why] of notSchemas) {
        for (const stream of [false, true]) {
          for (const strict of [undefined, false]) {
            expectRefusal(await post({ model, messages: msgs, stream, tools: [ok, fn(name, parameters, strict)] }), name, why, `${model} ${name} stream ${stream} strict ${strict}`);
          }
        }
      }
    }
    const err = await outcome(s.c.chat.completions.create({ model: 'sim-chat', messages: msgs, tools: [ok, fn('bad_type', notSchemas[0][1])] as OpenAI.ChatCompletionTool[] }));
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err as InstanceType<typeof OpenAI.BadRequestError>).to.deep.include({ status: 400, type: 'invalid_request_error', code: 'invalid_function_parameters', param: 'tools[1].function.parameters' });
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billed(), 'nothing billed').to.equal(before);
  });

  it("with strict: true, OpenAI's Structured Outputs rules (additionalProperties false and every property required, in every object) are its 400 naming the context, on every upstream kind; the same schemas without strict are served", async () => {
    const before = await billed();
    for (const model of models) {
      for (const [name, parameters, why] of strictBreaks) {
        expectRefusal(await post({ model, messages: msgs, tools: [ok, fn(name, parameters, true)] }), name, why, `${model} ${name}`);
      }
    }
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billed(), 'nothing billed').to.equal(before);
    // the verdict is cached per strict flag: without strict the same schema is served
    for (const [name, parameters] of strictBreaks) {
      const r = await post({ model: 'sim-chat', messages: msgs, tools: [ok, fn(name, parameters, false)] });
      expect(r.status, `${name} without strict ${r.text}`).to.equal(200);
    }
  });

  it("valid schemas are served unchanged on every upstream kind: the openai SDK's zodFunction (strict, draft-07), $defs and $ref, a draft-07 tuple, {} and an object without properties without strict, a schema with optional fields", async () => {
    const zod = zodFunction({
      name: 'get_weather',
      parameters: z.object({
        city: z.string(),
        unit: z.enum(['c', 'f']).nullable().optional(),
        tags: z.array(z.object({ k: z.string() })),
        when: z.union([z.string(), z.number()]).nullable(),
        kind: z.discriminatedUnion('t', [z.object({ t: z.literal('a'), a: z.string() }), z.object({ t: z.literal('b') })]),
      }),
    });
    const noArgs = zodFunction({ name: 'now', parameters: z.object({}) });
    const valid = [
      zod,
      noArgs,
      fn('with_defs', { type: 'object', properties: { p: { $ref: '#/$defs/point' } }, required: ['p'], additionalProperties: false, $defs: { point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'], additionalProperties: false } } }, true),
      fn('tuple_07', { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] } } }),
      fn('no_params', {}),
      fn('object_without_properties', { type: 'object' }),
      fn('optional', { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } }, required: ['location'] }, false),
      fn('no_parameters_at_all', undefined),
    ];
    for (const model of models) {
      const r = await post({ model, messages: msgs, tools: valid });
      expect(r.status, `${model} ${r.text}`).to.equal(200);
    }
    // the first call was sim-chat's, to the OpenAI-compatible upstream
    expect((env().sim.log.entries[0].body as { tools: unknown[] }).tools, 'sent as they came').to.deep.equal(JSON.parse(JSON.stringify(valid)));
    // through the SDK too
    const answer = await s.c.chat.completions.create({ model: 'sim-chat', messages: msgs, tools: [zod, noArgs] });
    expect(answer.choices).to.have.length(1);
  });

  it("the deprecated functions' parameters get the same check, naming functions[N].parameters (never strict: a legacy function has none), on every upstream kind; valid ones are served", async () => {
    const legacy = (name: string, parameters: unknown) => ({ name, parameters });
    const okFn = legacy('ok_fn', { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] });
    const before = await billed();
    for (const model of models) {
      for (const [name, parameters, why] of notSchemas) {
        const r = await post({ model, messages: msgs, functions: [okFn, legacy(name, parameters)] });
        expect(r.status, `${model} ${name} ${r.text}`).to.equal(400);
        expect(r.body.error).to.deep.equal({ code: 'invalid_function_parameters', message: `Invalid schema for function '${name}': ${why}`, type: 'invalid_request_error', param: 'functions[1].parameters' });
      }
    }
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billed(), 'nothing billed').to.equal(before);
    // the strict rules are not a legacy function's: an optional property is served
    const functions = [okFn, legacy('optional', { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, required: ['a'] })];
    const r = await post({ model: 'sim-chat', messages: msgs, functions });
    expect(r.status, r.text).to.equal(200);
    expect((env().sim.log.entries[0].body as { functions: unknown[] }).functions, 'sent as they came').to.deep.equal(functions);
  });

  it("a schema that is not a JSON Schema is OpenAI's 400 invalid_json_schema with any strict, on every upstream kind, JSON and streamed; nothing sent or billed", async () => {
    const before = await billed();
    for (const model of models) {
      for (const [name, schema, why] of metaBreaks) {
        for (const stream of [false, true]) {
          for (const strict of [undefined, null, false, true]) {
            expectFormatRefusal(await post({ model, messages: msgs, stream, response_format: format(name, schema, strict) }), name, why, `${model} ${name} stream ${stream} strict ${strict}`);
          }
        }
      }
    }
    const err = await outcome(s.c.chat.completions.create({ model: 'sim-chat', messages: msgs, response_format: format('bad_type', metaBreaks[0][1]) as OpenAI.ResponseFormatJSONSchema }));
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err as InstanceType<typeof OpenAI.BadRequestError>).to.deep.include({ status: 400, type: 'invalid_request_error', code: 'invalid_json_schema', param: 'response_format' });
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billed(), 'nothing billed').to.equal(before);
  });

  it("with strict: true, OpenAI's Structured Outputs rules (an object root with properties, additionalProperties false and every property required, no oneOf/allOf/if) are its 400, on every upstream kind; without strict the same schemas are served", async () => {
    const rootBreaks = notSchemas.filter(([, , why]) => why.startsWith('schema must be'));
    const before = await billed();
    for (const model of models) {
      for (const [name, schema, why] of [...rootBreaks, ...strictBreaks]) {
        expectFormatRefusal(await post({ model, messages: msgs, response_format: format(name, schema, true) }), name, why, `${model} ${name}`);
      }
    }
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billed(), 'nothing billed').to.equal(before);
    for (const [name, schema] of [...rootBreaks, ...strictBreaks]) {
      for (const strict of [undefined, false]) {
        const r = await post({ model: 'sim-chat', messages: msgs, response_format: format(name, schema, strict) });
        expect(r.status, `${name} strict ${strict} ${r.text}`).to.equal(200);
      }
    }
  });

  it("valid formats are served unchanged on every upstream kind: the openai SDK's zodResponseFormat (strict), $defs and $ref, a format without schema, json_object, text and null", async () => {
    const zod = zodResponseFormat(
      z.object({
        city: z.string(),
        unit: z.enum(['c', 'f']).nullable(),
        tags: z.array(z.object({ k: z.string() })),
        when: z.union([z.string(), z.number()]).nullable(),
      }),
      'weather',
    );
    const withDefs = format('with_defs', { type: 'object', properties: { p: { $ref: '#/$defs/point' } }, required: ['p'], additionalProperties: false, $defs: { point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'], additionalProperties: false } } }, true);
    const formats = [zod, withDefs, { type: 'json_schema', json_schema: { name: 'no_schema' } }, { type: 'json_object' }, { type: 'text' }, null];
    for (const model of models) {
      for (const response_format of formats) {
        const r = await post({ model, messages: msgs, response_format });
        expect(r.status, `${model} ${JSON.stringify(response_format)} ${r.text}`).to.equal(200);
      }
    }
    // the first calls were sim-chat's, to the OpenAI-compatible upstream
    expect((env().sim.log.entries[0].body as { response_format: unknown }).response_format, 'sent as it came').to.deep.equal(JSON.parse(JSON.stringify(zod)));
    const answer = await s.c.chat.completions.create({ model: 'sim-chat', messages: msgs, response_format: zod });
    expect(answer.choices).to.have.length(1);
  });
});
