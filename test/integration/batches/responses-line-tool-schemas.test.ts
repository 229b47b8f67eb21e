import { expect } from 'chai';
import { batchEnds, batchSuite, jsonl, parseJsonl, uploadBatchFile } from './helpers';

/**
 * A `/v1/responses` batch line runs through the synchronous route (workers/batch/runner.ts), so its
 * function tools' `parameters` are checked as that route checks them (shared/json-schema/tool-schemas.ts),
 * a namespace's member function tools included: a line whose schema OpenAI refuses is errored 400
 * `invalid_function_parameters` naming the tool's place, and the other lines run.
 */
describe('a /v1/responses batch line: function tool schemas checked as the synchronous route checks them', function () {
  this.timeout(60_000);
  const s = batchSuite();

  it("a top-level or namespace member function tool with parameters OpenAI refuses errors its line (400 invalid_function_parameters, its param); the valid line completes", async () => {
    const bad = { type: 'object', properties: { city: { type: 'strin' } } };
    const fn = (name: string, parameters: unknown) => ({ type: 'function', name, parameters });
    const line = (custom_id: string, tools: unknown[]) => ({ custom_id, method: 'POST', url: '/v1/responses', body: { model: 'sim-chat', input: 'hi', tools } });
    const lines = [
      line('ok', [fn('fine', { type: 'object', properties: {} })]),
      line('flat', [fn('broken', bad)]),
      line('member', [{ type: 'namespace', name: 'crm', description: 'CRM', tools: [fn('fine', {}), fn('broken', bad)] }]),
    ];
    const b = await s.openai.batches.create({ input_file_id: await uploadBatchFile(s.openai, jsonl(lines)), endpoint: '/v1/responses', completion_window: '24h' });
    const done = await batchEnds(s.openai, b.id);
    expect(done.request_counts).to.deep.equal({ total: 3, completed: 1, failed: 2 });
    const errors = parseJsonl<{ custom_id: string; response: { status_code: number; body: { error: { code: string; param: string; message: string } } } }>(await (await s.openai.files.content(done.error_file_id!)).text());
    const why = "Invalid schema for function 'broken': 'strin' is not one of ['array', 'boolean', 'integer', 'null', 'number', 'object', 'string'].";
    expect(errors.map((e) => [e.custom_id, e.response.status_code, e.response.body.error.code, e.response.body.error.param, e.response.body.error.message]).sort()).to.deep.equal([
      ['flat', 400, 'invalid_function_parameters', 'tools[0].parameters', why],
      ['member', 400, 'invalid_function_parameters', 'tools[0].tools[1].parameters', why],
    ]);
  });
});
