import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { expectOpenAI } from '../../helpers/conformance';
import { outcome } from '../../helpers/responses-background';
import { billedEvents } from '../../helpers/usage';
import { metaBreaks, notSchemas, strictBreaks } from '../../helpers/tool-schema-cases';

/** A Responses function tool: flat, `strict` only when given. */
const fn = (name: string, parameters: unknown, strict?: boolean) => ({ type: 'function', name, parameters, ...(strict === undefined ? {} : { strict }) });
const ok = fn('ok_tool', { type: 'object', properties: { q: { type: 'string' } } });
const ns = (...tools: unknown[]) => ({ type: 'namespace', name: 'crm', description: 'The CRM', tools });
const user = { role: 'user', content: 'hello' };
/** The items that load tools (OpenAI's AdditionalToolsItemParam, ToolSearchOutputItemParam: client and server). */
const loaders: Array<[string, (tools: unknown[]) => unknown[]]> = [
  ['additional_tools', (tools) => [user, { type: 'additional_tools', role: 'developer', tools }]],
  // a client tool search's output answers its call
  ['client tool_search_output', (tools) => [user, { type: 'tool_search_call', execution: 'client', call_id: 'ts_1', arguments: { query: 'crm' }, status: 'completed' }, { type: 'tool_search_output', execution: 'client', call_id: 'ts_1', status: 'completed', tools }]],
  ['server tool_search_output', (tools) => [user, { type: 'tool_search_output', execution: 'server', tools }]],
];
/** A json_schema text format. */
const format = (name: string, schema: unknown, strict?: boolean) => ({ type: 'json_schema', name, schema, ...(strict === undefined ? {} : { strict }) });
const configuration = (f: unknown) => ({ type: 'configuration_update', text: { format: f } });

/**
 * The schemas that reach the model other than through `tools` and `text.format`, checked as those are
 * (api/routes/responses/request-schemas.ts, with shared/json-schema/tool-schemas.ts): the function tools an
 * input item loads (`additional_tools`, `tool_search_output`; a namespace's members among them), the
 * `tools` of `POST /v1/responses/compact` (offered to the model in its summary pass) and the json_schema
 * format of a `configuration_update` item. OpenAI's refusal names the item's place: `input[N].tools[M].parameters`
 * (inferred from its param for a loaded tool's name, `input[0].tools[0].name`, as a probe of its
 * Responses API recorded it; its refusal of a loaded tool's schema was not found quoted), and
 * `input[N].text.format.schema`. Before, such a schema went to the upstream (the simulator answered it).
 */
describe('responses: function tools loaded by input items, compact tools and configuration_update formats are checked as tools and text.format are', function () {
  this.timeout(60_000);
  const s = openaiOrg();
  const post = (json: Record<string, unknown>, route = '/v1/responses') => call('POST', route, { headers: keyHeader(s.o.key), json: Object.assign({ model: 'sim-chat' }, json) });
  const billed = () => billedEvents(s.o.org.id);

  function expectRefusal(r: Reply, code: string, message: string, param: string, what: string): void {
    expect(r.status, `${what} ${r.text}`).to.equal(400);
    expect(r.body.error, what).to.deep.equal({ code, message, type: 'invalid_request_error', param });
    expectOpenAI('ErrorResponse', r.body);
  }

  it("a loaded function tool's parameters OpenAI refuses (not a JSON Schema; with strict: true its Structured Outputs rules) are its 400 invalid_function_parameters naming input[N].tools[M].parameters, a namespace member's input[N].tools[M].tools[K].parameters; JSON, streamed, in the background, on input_tokens and compact; nothing sent or billed", async () => {
    const before = await billed();
    const [name, parameters, why] = notSchemas[0];
    const [strictName, strictParameters, strictWhy] = strictBreaks[0];
    for (const [kind, load] of loaders) {
      const cases: Array<[unknown[], string, string, string]> = [
        [[ok, fn(name, parameters)], name, why, 'tools[1].parameters'],
        [[ok, fn(strictName, strictParameters, true)], strictName, strictWhy, 'tools[1].parameters'],
        [[ok, ns(ok, fn(name, parameters))], name, why, 'tools[1].tools[1].parameters'],
      ];
      for (const [tools, n, w, at] of cases) {
        const input = load(tools);
        const param = `input[${input.length - 1}].${at}`;
        for (const [extra, route] of [[{}], [{ stream: true }], [{ background: true }], [{}, '/v1/responses/input_tokens'], [{}, '/v1/responses/compact']] as Array<[Record<string, unknown>, string?]>) {
          const r = await post(Object.assign({ input }, extra), route);
          expectRefusal(r, 'invalid_function_parameters', `Invalid schema for function '${n}': ${w}`, param, `${kind} ${n} ${JSON.stringify(extra)} ${route ?? ''}`);
        }
      }
    }
    const err = await outcome(s.c.responses.create({ model: 'sim-chat', input: loaders[0][1]([fn(name, parameters)]) as OpenAI.Responses.ResponseInput }));
    expect(err as InstanceType<typeof OpenAI.BadRequestError>)
      .to.be.instanceOf(OpenAI.BadRequestError)
      .and.deep.include({ status: 400, code: 'invalid_function_parameters', param: 'input[1].tools[0].parameters' });
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billed(), 'nothing billed').to.equal(before);
  });

  it("POST /v1/responses/compact's tools (Codex sends its tools; they are offered to the model in the summary pass) are checked as POST /v1/responses's: OpenAI's 400 naming tools[N].parameters, a namespace member's tools[N].tools[M].parameters; nothing sent or billed", async () => {
    const before = await billed();
    const [name, parameters, why] = notSchemas[0];
    const [strictName, strictParameters, strictWhy] = strictBreaks[0];
    const cases: Array<[unknown[], string, string, string]> = [
      [[ok, fn(name, parameters)], name, why, 'tools[1].parameters'],
      [[ok, fn(strictName, strictParameters, true)], strictName, strictWhy, 'tools[1].parameters'],
      [[ok, ns(ok, fn(name, parameters))], name, why, 'tools[1].tools[1].parameters'],
    ];
    for (const [tools, n, w, param] of cases) {
      expectRefusal(await post({ input: 'hello', tools }, '/v1/responses/compact'), 'invalid_function_parameters', `Invalid schema for function '${n}': ${w}`, param, `compact ${n}`);
    }
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billed(), 'nothing billed').to.equal(before);
    // what strict mode refuses is served without strict, as on POST /v1/responses
    const served = await post({ input: 'hello', tools: [ok, fn(strictName, strictParameters, false)] }, '/v1/responses/compact');
    expect(served.status, served.text).to.equal(200);
  });

  it("a configuration_update item's json_schema format whose schema OpenAI refuses is its 400 invalid_json_schema naming input[N].text.format.schema, JSON, streamed, in the background, on input_tokens and compact; nothing sent or billed; without strict the strict breaks are served", async () => {
    const before = await billed();
    const [name, schema, why] = metaBreaks[0];
    const [strictName, strictSchema, strictWhy] = strictBreaks[0];
    for (const [f, n, w] of [[format(name, schema), name, why], [format(strictName, strictSchema, true), strictName, strictWhy]] as Array<[unknown, string, string]>) {
      const input = [user, configuration(format('fine', { type: 'object' })), configuration(f)];
      for (const [extra, route] of [[{}], [{ stream: true }], [{ background: true }], [{}, '/v1/responses/input_tokens'], [{}, '/v1/responses/compact']] as Array<[Record<string, unknown>, string?]>) {
        const r = await post(Object.assign({ input }, extra), route);
        expectRefusal(r, 'invalid_json_schema', `Invalid schema for response_format '${n}': ${w}`, 'input[2].text.format.schema', `${n} ${JSON.stringify(extra)} ${route ?? ''}`);
      }
    }
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billed(), 'nothing billed').to.equal(before);
    const served = await post({ store: false, input: [user, configuration(format(strictName, strictSchema, false))] });
    expect(served.status, served.text).to.equal(200);
  });

  it('valid loaded tools and configuration formats are served, and the loaded tools are offered upstream with their parameters as sent', async () => {
    const weather = fn('get_weather', { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }, true);
    for (const [kind, load] of loaders) {
      const r = await post({ store: false, input: load([ok, ns(weather)]) });
      expect(r.status, `${kind} ${r.text}`).to.equal(200);
    }
    const sent = (env().sim.log.entries[0].body as { tools: Array<{ function: { name: string; parameters: unknown } }> }).tools;
    expect(sent.find((t) => t.function.name === 'crm__get_weather')!.function.parameters).to.deep.equal(weather.parameters);
    const formatted = await post({ store: false, input: [user, configuration(format('answer', { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false }, true))] });
    expect(formatted.status, formatted.text).to.equal(200);
  });
});
