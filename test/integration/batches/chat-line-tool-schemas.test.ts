import { expect } from 'chai';
import { usageSettled } from '../../helpers/usage';
import { batchEnds, batchSuite, batchUsage, jsonl, parseJsonl, uploadBatchFile } from './helpers';

/**
 * A `/v1/chat/completions` batch line runs through the synchronous route (workers/batch/runner.ts), so
 * its function tools' `parameters`, the legacy `functions`' and a json_schema `response_format`'s
 * schema are checked as that route checks them (shared/json-schema/tool-schemas.ts refuseInvalidToolSchemas,
 * refuseInvalidResponseSchema): the line is in the error file with the synchronous refusal (status,
 * code, param, words), unbilled; the other lines complete. The same for `/v1/responses` lines:
 * responses-line-tool-schemas.test.ts.
 */
describe('a /v1/chat/completions batch line: tool and response schemas checked as the synchronous route checks them', function () {
  this.timeout(60_000);
  const s = batchSuite();

  it('a line with a function tool, a legacy function or a response_format schema OpenAI refuses is errored as the synchronous request is refused; only the valid line is billed', async () => {
    const bad = { type: 'object', properties: { city: { type: 'strin' } } };
    const messages = [{ role: 'user', content: 'hi' }];
    const bodies: Record<string, Record<string, unknown>> = {
      ok: { model: 'sim-chat', messages, tools: [{ type: 'function', function: { name: 'fine', parameters: { type: 'object', properties: {} } } }] },
      tool: { model: 'sim-chat', messages, tools: [{ type: 'function', function: { name: 'broken', parameters: bad } }] },
      functions: { model: 'sim-chat', messages, functions: [{ name: 'broken', parameters: bad }] },
      response_format: { model: 'sim-chat', messages, response_format: { type: 'json_schema', json_schema: { name: 'out', schema: bad } } },
    };
    const lines = Object.entries(bodies).map(([custom_id, body]) => ({ custom_id, method: 'POST', url: '/v1/chat/completions', body }));
    const b = await s.openai.batches.create({ input_file_id: await uploadBatchFile(s.openai, jsonl(lines)), endpoint: '/v1/chat/completions', completion_window: '24h' });
    const done = await batchEnds(s.openai, b.id);
    expect(done.request_counts).to.deep.equal({ total: 4, completed: 1, failed: 3 });

    type ErrorLine = { custom_id: string; response: { status_code: number; body: { error: { code: string; param: string; message: string; type: string } } } };
    const errors = parseJsonl<ErrorLine>(await (await s.openai.files.content(done.error_file_id!)).text());
    const why = "'strin' is not one of ['array', 'boolean', 'integer', 'null', 'number', 'object', 'string'].";
    expect(errors.map((e) => [e.custom_id, e.response.status_code, e.response.body.error.code, e.response.body.error.param, e.response.body.error.message]).sort()).to.deep.equal([
      ['functions', 400, 'invalid_function_parameters', 'functions[0].parameters', `Invalid schema for function 'broken': ${why}`],
      ['response_format', 400, 'invalid_json_schema', 'response_format', `Invalid schema for response_format 'out': ${why}`],
      ['tool', 400, 'invalid_function_parameters', 'tools[0].function.parameters', `Invalid schema for function 'broken': ${why}`],
    ]);
    // the same bodies sent to POST /v1/chat/completions: the same error object
    for (const e of errors) {
      const sync = await s.openai.chat.completions.create(bodies[e.custom_id] as never).then(
        () => undefined,
        (err: { status: number; error: unknown }) => err,
      );
      expect(sync?.status, e.custom_id).to.equal(e.response.status_code);
      expect(sync?.error, e.custom_id).to.deep.equal(e.response.body.error);
    }

    await usageSettled();
    const billed = (await batchUsage(b.id)).map((u) => Number(/_(\d+)(?:_\d+)?$/.exec(u.request_id)![1]));
    expect(billed, 'the ok line (index 0) only').to.deep.equal([0]);
  });
});
