import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { batchSuite, batchUsage } from './helpers';

type Params = Anthropic.Messages.MessageCreateParamsNonStreaming;

/** A request's params given loosely: the bad ones are what the SDK's types would not let through. */
const params = (model: string, extra: Record<string, unknown>): Params => ({ model, max_tokens: 64, messages: [{ role: 'user', content: 'line check' }], ...extra }) as unknown as Params;

const INVALID_2020_12 =
  'tools.0.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12). Learn more about tool use at https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview.';

/** Each bad request: its params and the words of the refusal POST /v1/messages answers it with (api/routes/messages/*), when pinned here; `notFound`: a 404 `not_found_error`, not a 400. */
const BAD: Record<string, { params: Params; message?: string; notFound?: true }> = {
  // input-schemas.ts: draft-07's array `items` is not a draft 2020-12 schema
  draft07: { params: params('sim-chat', { tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { ids: { type: 'array', items: [{ type: 'string' }] } } } }] }), message: INVALID_2020_12 },
  // the same on an Anthropic-native model, which would otherwise be sent the request to refuse
  draft07_native: { params: params('sim-claude', { tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { ids: { type: 'array', items: [{ type: 'string' }] } } } }] }), message: INVALID_2020_12 },
  // input-schemas.ts: the root's type
  no_type: { params: params('sim-chat', { tools: [{ name: 'lookup', input_schema: { properties: {} } }] }), message: 'tools.0.custom.input_schema.type: Field required' },
  // strict-schemas.ts: a strict tool's numeric bound
  strict_tool: {
    params: params('sim-chat', { tools: [{ name: 'count', strict: true, input_schema: { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'], additionalProperties: false } }] }),
    message: "tools.0.custom: For 'integer' type, property 'minimum' is not supported",
  },
  // strict-schemas.ts: the output format's schema
  output_format: {
    params: params('sim-chat', { output_config: { format: { type: 'json_schema', schema: { type: 'object', properties: { a: { type: 'string' } } } } } }),
    message: "output_config.format.schema: For 'object' type, 'additionalProperties' must be explicitly set to false",
  },
  // thinking-budget.ts: a manual budget not below max_tokens
  thinking_budget: {
    params: params('sim-chat', { max_tokens: 1024, thinking: { type: 'enabled', budget_tokens: 2048 } }),
    message: '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size',
  },
  // tool-pairing.ts (schema.ts): a tool_use without its tool_result in the next turn
  tool_pairing: {
    params: params('sim-chat', {
      messages: [
        { role: 'user', content: 'look it up' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} }] },
        { role: 'user', content: 'and?' },
      ],
    }),
    message: 'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
  },
  // native-only.ts: the MCP connector on a translated upstream
  mcp_servers: { params: params('sim-chat', { mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'x' }] }) },
  // schema.ts: an option of the wrong type
  temperature: { params: params('sim-chat', { temperature: 'hot' }) },
  // shared-account-ids.ts: ids of the platform's Anthropic workspace, on the native bypass
  file_source_native: {
    params: params('sim-claude', { messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: 'file_011other' } }, { type: 'text', text: 'summarise' }] }] }),
    message: "File `file_011other` not found. File ids other than those this model's code execution made for your organization are not sent to its upstream (one account for every organization); send the file itself (a base64 or url source).",
    notFound: true,
  },
  container_native: { params: params('sim-claude', { container: 'container_011other' }), message: "container: container 'container_011other' not found. Containers are reused only by the organization they were made for, within their lifetime; leave out the id to start a new one." },
};

/**
 * A Message Batch's request is judged exactly as `POST /v1/messages` judges it: its line is sent to
 * the synchronous route (workers/batch/runner.ts through api/ticket-app.ts), so every check that route
 * runs before a lane (input_schema draft 2020-12, structured outputs' strict rules, the thinking
 * budget, ...) refuses the line, in the same words, as an `errored` result with
 * `invalid_request_error`, unbilled, while the batch's other requests succeed. Anthropic validates
 * `params` when the request is processed, not at create: "Validation of the `params` object for each
 * message request is performed asynchronously, and validation errors are returned when processing of
 * the entire batch has ended" (its Batch processing guide, "Test your batch requests with the Messages API").
 */
describe('Message Batches: a request is refused as POST /v1/messages refuses it', function () {
  this.timeout(90_000);
  const s = batchSuite();

  it('each malformed request is errored with the synchronous refusal (invalid_request_error, or not_found_error for a file of the shared workspace; the same words), unbilled; the valid ones succeed and only they are billed', async () => {
    const ok = { ok_translated: params('sim-chat', {}), ok_native: params('sim-claude', {}) };
    const requests = [
      { custom_id: 'ok_translated', params: ok.ok_translated },
      ...Object.entries(BAD).map(([custom_id, b]) => ({ custom_id, params: b.params })),
      { custom_id: 'ok_native', params: ok.ok_native },
    ];
    const created = await s.anthropic.messages.batches.create({ requests });
    expect(created.processing_status, 'params are checked when the request runs, not at create').to.equal('in_progress');
    const done = await waitFor(async () => {
      const b = await s.anthropic.messages.batches.retrieve(created.id);
      return b.processing_status === 'ended' ? b : undefined;
    }, 60_000, 200);
    expect(done?.request_counts).to.deep.equal({ processing: 0, succeeded: 2, errored: Object.keys(BAD).length, canceled: 0, expired: 0 });

    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const r of await s.anthropic.messages.batches.results(created.id)) results.push(r);
    expect(results.map((r) => r.custom_id)).to.deep.equal(requests.map((r) => r.custom_id));
    for (const r of results) {
      if (r.custom_id in ok) {
        expect(r.result.type, r.custom_id).to.equal('succeeded');
        continue;
      }
      if (r.result.type !== 'errored') throw new Error(`${r.custom_id}: ${JSON.stringify(r.result)}`);
      const error = r.result.error as unknown as { type: string; error: { type: string; message: string } };
      expect(error.type, r.custom_id).to.equal('error');
      expect(error.error.type, r.custom_id).to.equal(BAD[r.custom_id].notFound ? 'not_found_error' : 'invalid_request_error');
      if (BAD[r.custom_id].message) expect(error.error.message, r.custom_id).to.equal(BAD[r.custom_id].message);
      // the same request sent to POST /v1/messages is refused with the same error object
      const sync = await s.anthropic.messages.create(BAD[r.custom_id].params).then(
        () => undefined,
        (e: unknown) => e as InstanceType<typeof Anthropic.APIError>,
      );
      expect(sync?.status, r.custom_id).to.equal(BAD[r.custom_id].notFound ? 404 : 400);
      expect((sync?.error as { error: unknown }).error, r.custom_id).to.deep.equal(error.error);
    }

    // billed: the two answered requests only (line indexes 0 and the last)
    await usageSettled();
    const billed = (await batchUsage(created.id)).map((u) => Number(/_(\d+)(?:_\d+)?$/.exec(u.request_id)![1]));
    expect(billed.sort((a, b) => a - b)).to.deep.equal([0, requests.length - 1]);
  });
});
