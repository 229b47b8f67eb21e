import { expect } from 'chai';
import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader } from '../../helpers/http';
import { expectOpenAI } from '../../helpers/conformance';
import { outcome } from '../../helpers/responses-background';
import { billedEvents } from '../../helpers/usage';
import { metaBreaks, notSchemas, strictBreaks } from '../../helpers/tool-schema-cases';

/** A Responses json_schema `text.format`, `strict` only when given. */
const textFormat = (name: string, schema: unknown, strict?: boolean | null) => ({ format: { type: 'json_schema', name, schema, ...(strict === undefined ? {} : { strict }) } });

/**
 * The Responses API's json_schema `text.format` whose `schema` OpenAI refuses, checked as chat's
 * `response_format` is (shared/json-schema/tool-schemas.ts refuseInvalidResponseSchema): 400
 * invalid_request_error `invalid_json_schema` naming `text.format.schema`, "Invalid schema for
 * response_format '<name>': ..." (OpenAI's body as mavam/pi-web-providers issue 14 quotes it), JSON,
 * streamed and on input_tokens, before anything is sent or billed; the Structured Outputs rules with
 * `strict: true` only. Before, the schema went to the upstream (the simulator answered it).
 */
describe('responses: invalid json_schema text.format (invalid_json_schema)', function () {
  this.timeout(60_000);
  const s = openaiOrg();
  const send = (text: unknown, extra: Record<string, unknown> = {}, route = '/v1/responses') => call('POST', route, { headers: keyHeader(s.o.key), json: { model: 'sim-chat', input: 'answer in JSON', text, ...extra } });

  it("a schema that is not a JSON Schema (any strict), or one breaking the strict rules (strict: true), is OpenAI's 400 naming text.format.schema, JSON, streamed, in the background and on input_tokens; nothing sent or billed; without strict the strict breaks are served", async () => {
    const before = await billedEvents(s.o.org.id);
    const rootBreaks = notSchemas.filter(([, , why]) => why.startsWith('schema must be'));
    const cases: Array<[string, unknown, string, Array<boolean | null | undefined>]> = [
      ...metaBreaks.map(([n, schema, why]): [string, unknown, string, Array<boolean | null | undefined>] => [n, schema, why, [undefined, null, false, true]]),
      ...[...rootBreaks, ...strictBreaks].map(([n, schema, why]): [string, unknown, string, Array<boolean | null | undefined>] => [n, schema, why, [true]]),
    ];
    for (const [name, schema, why, stricts] of cases) {
      for (const strict of stricts) {
        for (const [extra, route] of [[{}], [{ stream: true }], [{ background: true }], [{}, '/v1/responses/input_tokens']] as Array<[Record<string, unknown>, string?]>) {
          const r = await send(textFormat(name, schema, strict), extra, route);
          const what = `${name} strict ${strict} ${JSON.stringify(extra)} ${route ?? ''}`;
          expect(r.status, `${what} ${r.text}`).to.equal(400);
          expect(r.body.error, what).to.deep.equal({ code: 'invalid_json_schema', message: `Invalid schema for response_format '${name}': ${why}`, type: 'invalid_request_error', param: 'text.format.schema' });
          expectOpenAI('ErrorResponse', r.body);
        }
      }
    }
    const err = await outcome(s.c.responses.create({ model: 'sim-chat', input: 'hello', text: textFormat('bad_type', metaBreaks[0][1]) as OpenAI.Responses.ResponseTextConfig }));
    expect(err as InstanceType<typeof OpenAI.BadRequestError>).to.be.instanceOf(OpenAI.BadRequestError).and.deep.include({ status: 400, code: 'invalid_json_schema', param: 'text.format.schema' });
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billedEvents(s.o.org.id), 'nothing billed').to.equal(before);
    for (const [name, schema] of [...rootBreaks, ...strictBreaks]) {
      const r = await send(textFormat(name, schema, false), { store: false });
      expect(r.status, `${name} without strict ${r.text}`).to.equal(200);
    }
  });

  it("valid formats are served: the SDK's zodTextFormat (strict), text and json_object", async () => {
    const zod = zodTextFormat(z.object({ city: z.string(), unit: z.enum(['c', 'f']).nullable() }), 'weather');
    const answer = await s.c.responses.create({ model: 'sim-chat', input: 'hello', text: { format: zod } });
    expect(answer.status).to.equal('completed');
    for (const format of [{ type: 'text' }, { type: 'json_object' }]) {
      const r = await send({ format }, { store: false });
      expect(r.status, `${format.type} ${r.text}`).to.equal(200);
    }
  });
});
