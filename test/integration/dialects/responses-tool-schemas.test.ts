import fs from 'fs';
import path from 'path';
import { expect } from 'chai';
import OpenAI from 'openai';
import { zodResponsesFunction } from 'openai/helpers/zod';
import { z } from 'zod';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { expectOpenAI } from '../../helpers/conformance';
import { outcome } from '../../helpers/responses-background';
import { billedEvents } from '../../helpers/usage';
import { notSchemas, strictBreaks } from '../../helpers/tool-schema-cases';

/** A Responses function tool: flat, `strict` only when given (null counts as given). */
const fn = (name: string, parameters: unknown, strict?: boolean | null) => ({ type: 'function', name, parameters, ...(strict === undefined ? {} : { strict }) });
/** A valid tool first, so that the refusal names the second: tools[1]. */
const ok = fn('ok_tool', { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }, false);
const search = { type: 'web_search' };
/** The tools Codex CLI 0.171.0 sends (captured from `codex exec`; test/fixtures/agents/README.md): strict false, schemas strict mode refuses. */
const codexTools = JSON.parse(fs.readFileSync(path.resolve('test/fixtures/agents/codex-0.171.0-tools.json'), 'utf8')) as Array<Record<string, unknown>>;
const asTools = (tools: unknown[]) => tools as OpenAI.Responses.Tool[];

/**
 * The Responses API's function tools whose `parameters` OpenAI refuses (shared/json-schema/tool-schemas.ts,
 * as on chat completions): 400 invalid_request_error `invalid_function_parameters` naming
 * `tools[N].parameters` (flat tools: OpenAI's param for /v1/responses, as ComposioHQ/composio issue
 * 1829 quotes it), "Invalid schema for function '<name>': ...", JSON and streamed, on the plain path
 * and the hosted web search path, on `input_tokens` too, before anything is sent or billed. The
 * Structured Outputs rules apply with `strict: true` only: what Codex sends (strict false) is served.
 * Before, such a schema went to the upstream (the simulator answered it).
 */
describe('responses: invalid function tool schemas (invalid_function_parameters)', function () {
  this.timeout(60_000);
  const s = openaiOrg();
  const post = (json: Record<string, unknown>, route = '/v1/responses') => call('POST', route, { headers: keyHeader(s.o.key), json });
  const billed = () => billedEvents(s.o.org.id);

  function expectRefusal(r: Reply, name: string, why: string, what: string): void {
    expect(r.status, `${what} ${r.text}`).to.equal(400);
    expect(r.body.error, what).to.deep.equal({ code: 'invalid_function_parameters', message: `Invalid schema for function '${name}': ${why}`, type: 'invalid_request_error', param: 'tools[1].parameters' });
    expectOpenAI('ErrorResponse', r.body);
  }

  /** A refusal through the SDK: create and stream both reject with its BadRequestError and OpenAI's fields. */
  async function expectSdkRefusal(tools: unknown[], name: string, why: string): Promise<void> {
    for (const stream of [false, true]) {
      const err = await outcome(s.c.responses.create({ model: 'sim-chat', input: 'hello', tools: asTools(tools), stream }));
      expect(err, `stream ${stream}`).to.be.instanceOf(OpenAI.BadRequestError);
      expect(err as InstanceType<typeof OpenAI.BadRequestError>).to.deep.include({ status: 400, type: 'invalid_request_error', code: 'invalid_function_parameters', param: 'tools[1].parameters' });
      expect((err as Error).message).to.include(`Invalid schema for function '${name}': ${why}`);
    }
  }

  it("a parameters that is not a JSON Schema, or not an object schema, is OpenAI's 400 naming tools[N].parameters, with any strict, JSON and streamed, with hosted web search and on input_tokens; nothing sent or billed", async () => {
    const before = await billed();
    for (const model of ['sim-chat', 'sim-claude']) {
      for (const [name, parameters, why] of notSchemas) {
        for (const strict of [undefined, false, null, true]) {
          for (const stream of [false, true]) {
            const tools = [ok, fn(name, parameters, strict)];
            expectRefusal(await post({ model, input: 'hello', stream, tools }), name, why, `${model} ${name} stream ${stream} strict ${strict}`);
            expectRefusal(await post({ model, input: 'hello', stream, tools: [...tools, search] }), name, why, `${model} ${name} web search stream ${stream} strict ${strict}`);
          }
        }
        expectRefusal(await post({ model, input: 'hello', tools: [ok, fn(name, parameters)] }, '/v1/responses/input_tokens'), name, why, `${model} ${name} input_tokens`);
      }
    }
    // in the background too: refused before a response is made
    const [name, parameters, why] = notSchemas[0];
    expectRefusal(await post({ model: 'sim-chat', input: 'hello', background: true, tools: [ok, fn(name, parameters)] }), name, why, 'background');
    await expectSdkRefusal([ok, fn(name, parameters)], name, why);
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billed(), 'nothing billed').to.equal(before);
  });

  it("with strict: true, OpenAI's Structured Outputs rules are its 400 naming the context, plain and with hosted web search, JSON and streamed; without strict (absent, false, null) the same schemas are served", async () => {
    const before = await billed();
    for (const [name, parameters, why] of strictBreaks) {
      for (const stream of [false, true]) {
        for (const extra of [[], [search]]) {
          expectRefusal(await post({ model: 'sim-chat', input: 'hello', stream, tools: [ok, fn(name, parameters, true), ...extra] }), name, why, `${name} stream ${stream} ${extra.length ? 'web search' : 'plain'}`);
        }
      }
      expectRefusal(await post({ model: 'sim-chat', input: 'hello', tools: [ok, fn(name, parameters, true)] }, '/v1/responses/input_tokens'), name, why, `${name} input_tokens`);
    }
    await expectSdkRefusal([ok, fn(strictBreaks[0][0], strictBreaks[0][1], true)], strictBreaks[0][0], strictBreaks[0][2]);
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billed(), 'nothing billed').to.equal(before);
    for (const [name, parameters] of strictBreaks) {
      for (const strict of [undefined, false, null]) {
        const r = await post({ model: 'sim-chat', input: 'hello', tools: [ok, fn(name, parameters, strict)] });
        expect(r.status, `${name} strict ${strict} ${r.text}`).to.equal(200);
      }
    }
  });

  it("a namespace's member function tool is checked as a tool of its own: OpenAI's 400 naming tools[N].tools[M].parameters, with strict: true its Structured Outputs rules, JSON, streamed and on input_tokens; nothing sent or billed; a valid member is served", async () => {
    const before = await billed();
    const ns = (...members: unknown[]) => ({ type: 'namespace', name: 'crm', description: 'The CRM', tools: members });
    const [name, parameters, why] = notSchemas[0];
    const [strictName, strictParameters, strictWhy] = strictBreaks[0];
    const cases: Array<[unknown[], string, string]> = [
      [[ok, ns(ok, fn(name, parameters))], name, why],
      [[ok, ns(ok, fn(strictName, strictParameters, true))], strictName, strictWhy],
    ];
    for (const [tools, n, w] of cases) {
      for (const [route, stream] of [['/v1/responses', false], ['/v1/responses', true], ['/v1/responses/input_tokens', false]] as const) {
        const r = await post({ model: 'sim-chat', input: 'hello', stream, tools }, route);
        expect(r.status, `${n} ${route} stream ${stream} ${r.text}`).to.equal(400);
        expect(r.body.error).to.deep.equal({ code: 'invalid_function_parameters', message: `Invalid schema for function '${n}': ${w}`, type: 'invalid_request_error', param: 'tools[1].tools[1].parameters' });
      }
    }
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billed(), 'nothing billed').to.equal(before);
    const served = await post({ model: 'sim-chat', input: 'hello', tools: [ok, ns(ok, fn(strictName, strictParameters, false))] });
    expect(served.status, served.text).to.equal(200);
  });

  it('valid schemas are served: what Codex 0.171.0 sends (plain, with its hosted web search, streamed, counted), the SDK zodResponsesFunction (strict), {} and no parameters', async () => {
    const plain = codexTools.filter((t) => t.type !== 'web_search');
    expect(plain.length, 'the fixture has its function tools and its web search').to.be.below(codexTools.length);
    for (const tools of [plain, codexTools]) {
      for (const stream of [false, true]) {
        const r = await post({ model: 'sim-chat', input: 'hello', stream, store: false, tools });
        expect(r.status, `${tools.length} tools stream ${stream} ${r.text}`).to.equal(200);
      }
    }
    const counted = await post({ model: 'sim-chat', input: 'hello', tools: codexTools }, '/v1/responses/input_tokens');
    expect(counted.status, counted.text).to.equal(200);
    // the first call was the plain one: its function tools went upstream as chat tools, with their parameters as sent
    const sent = (env().sim.log.entries[0].body as { tools: Array<{ function: { name: string; parameters: unknown } }> }).tools;
    const exec = codexTools.find((t) => t.name === 'exec_command')!;
    expect(sent.find((t) => t.function.name === 'exec_command')!.function.parameters).to.deep.equal(exec.parameters);

    const weather = zodResponsesFunction({ name: 'get_weather', parameters: z.object({ city: z.string(), unit: z.enum(['c', 'f']).nullable().optional() }) });
    const answer = await s.c.responses.create({ model: 'sim-chat', input: 'hello', tools: asTools([weather, fn('no_params', {}), fn('none_at_all', null), fn('object_without_properties', { type: 'object' }, false)]) });
    expect(answer.status).to.equal('completed');
  });
});
