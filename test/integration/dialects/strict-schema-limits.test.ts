import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { expectOpenAI } from '../../helpers/conformance';
import { outcome } from '../../helpers/responses-background';
import { billedEvents } from '../../helpers/usage';
import { limitBreaks, limitFits } from '../../helpers/tool-schema-cases';

const msgs = [{ role: 'user' as const, content: 'hello' }];
const okParams = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };

/**
 * Where a strict schema sits in each dialect, how the request carrying it is built, and how OpenAI
 * names it when it refuses it (shared/json-schema/tool-schemas.ts): a chat function tool
 * (`tools[1].function.parameters`, a valid tool first), a chat json_schema `response_format`, a
 * Responses flat function tool (`tools[1].parameters`) and a Responses `text.format`.
 */
interface Place {
  what: string;
  route: string;
  body: (name: string, schema: unknown, strict: boolean) => Record<string, unknown>;
  code: string;
  param: string;
  prefix: (name: string) => string;
}
const places: Place[] = [
  {
    what: 'chat tool',
    route: '/v1/chat/completions',
    body: (name, parameters, strict) => ({ model: 'sim-chat', messages: msgs, tools: [{ type: 'function', function: { name: 'ok_tool', parameters: okParams } }, { type: 'function', function: { name, parameters, strict } }] }),
    code: 'invalid_function_parameters',
    param: 'tools[1].function.parameters',
    prefix: (name) => `Invalid schema for function '${name}': `,
  },
  {
    what: 'chat response_format',
    route: '/v1/chat/completions',
    body: (name, schema, strict) => ({ model: 'sim-chat', messages: msgs, response_format: { type: 'json_schema', json_schema: { name, schema, strict } } }),
    code: 'invalid_json_schema',
    param: 'response_format',
    prefix: (name) => `Invalid schema for response_format '${name}': `,
  },
  {
    what: 'responses tool',
    route: '/v1/responses',
    body: (name, parameters, strict) => ({ model: 'sim-chat', input: 'hello', store: false, tools: [{ type: 'function', name: 'ok_tool', parameters: okParams, strict: false }, { type: 'function', name, parameters, strict }] }),
    code: 'invalid_function_parameters',
    param: 'tools[1].parameters',
    prefix: (name) => `Invalid schema for function '${name}': `,
  },
  {
    what: 'responses text.format',
    route: '/v1/responses',
    body: (name, schema, strict) => ({ model: 'sim-chat', input: 'answer in JSON', store: false, text: { format: { type: 'json_schema', name, schema, strict } } }),
    code: 'invalid_json_schema',
    param: 'text.format.schema',
    prefix: (name) => `Invalid schema for response_format '${name}': `,
  },
];

/**
 * OpenAI's Structured Outputs limits for a strict schema (shared/json-schema/strict-limits.ts: 10
 * levels of nesting, 5000 properties, 1000 enum values, 15,000 characters in a string enum of more
 * than 250 values, 120,000 characters of names, enum and const values) and its rule that a local
 * `$ref` resolves (tool-schemas.ts strictProblem), on chat completions and the Responses API, in
 * function tools and json_schema formats: just over is OpenAI's 400 in its words, JSON and streamed,
 * before anything is sent upstream or billed; just under is served. Before, the gateway sent every
 * one of them upstream (an OpenAI upstream refused them after a lane was taken). Only strict schemas
 * are held to them: the same schemas without strict are served.
 */
describe('OpenAI refusals: strict schemas over the Structured Outputs limits or with a dangling $ref (chat and Responses)', function () {
  this.timeout(120_000);
  const s = openaiOrg();
  const post = (route: string, json: Record<string, unknown>) => call('POST', route, { headers: keyHeader(s.o.key), json });

  function expectRefusal(r: Reply, place: Place, name: string, why: string, what: string): void {
    expect(r.status, `${what} ${r.text.slice(0, 500)}`).to.equal(400);
    expect(r.body.error, what).to.deep.equal({ code: place.code, message: `${place.prefix(name)}${why}`, type: 'invalid_request_error', param: place.param });
    expectOpenAI('ErrorResponse', r.body);
  }

  it("a strict schema just over a limit, or with a $ref that does not resolve, is OpenAI's 400 in its words at the schema's place, JSON and streamed, in all four places; nothing sent or billed", async () => {
    const before = await billedEvents(s.o.org.id);
    for (const place of places) {
      for (const [name, schema, why] of limitBreaks) {
        for (const stream of [false, true]) {
          const r = await post(place.route, { ...place.body(name, schema, true), stream });
          expectRefusal(r, place, name, why, `${place.what} ${name} stream ${stream}`);
        }
      }
    }
    // chat on an Anthropic upstream too (the check comes before the upstream is chosen), on input_tokens and in the background
    const [name, schema, why] = limitBreaks[0];
    expectRefusal(await post('/v1/chat/completions', { ...places[0].body(name, schema, true), model: 'sim-claude' }), places[0], name, why, 'sim-claude');
    expectRefusal(await post('/v1/responses/input_tokens', places[3].body(name, schema, true)), places[3], name, why, 'input_tokens');
    expectRefusal(await post('/v1/responses', { ...places[3].body(name, schema, true), store: true, background: true }), places[3], name, why, 'background');
    // through the SDK
    const err = await outcome(s.c.chat.completions.create(places[1].body(name, schema, true) as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming));
    expect(err as InstanceType<typeof OpenAI.BadRequestError>).to.be.instanceOf(OpenAI.BadRequestError).and.deep.include({ status: 400, code: 'invalid_json_schema', param: 'response_format' });
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billedEvents(s.o.org.id), 'nothing billed').to.equal(before);
  });

  it('the same schemas without strict are not held to the limits: served in all four places', async () => {
    for (const place of places) {
      for (const [name, schema] of limitBreaks) {
        const r = await post(place.route, place.body(name, schema, false));
        expect(r.status, `${place.what} ${name} ${r.text.slice(0, 500)}`).to.equal(200);
      }
    }
    expect(env().sim.log.entries).to.have.length(places.length * limitBreaks.length);
  });

  it('a strict schema at each limit, and references that resolve (#, $defs with an escaped name, definitions, recursion), are served as sent in all four places, JSON and streamed', async () => {
    let calls = 0;
    for (const place of places) {
      for (const [name, schema] of limitFits) {
        for (const stream of [false, true]) {
          const r = await post(place.route, { ...place.body(name, schema, true), stream });
          expect(r.status, `${place.what} ${name} stream ${stream} ${r.text.slice(0, 500)}`).to.equal(200);
          calls++;
        }
      }
    }
    const entries = env().sim.log.entries;
    expect(entries, 'each reached the upstream').to.have.length(calls);
    // the first: the chat tool at ten levels, sent as it came
    const sent = (entries[0].body as { tools: Array<{ function: { parameters: unknown; strict: boolean } }> }).tools[1].function;
    expect(sent).to.deep.include({ parameters: limitFits[0][1], strict: true });
  });
});
