import type { Request, Response } from 'express';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import {
  CallToolRequestSchema,
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  ErrorCode,
  LATEST_PROTOCOL_VERSION,
  ListToolsRequestSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
  isInitializeRequest,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { AppContext } from '../../context';
import type { ApiError } from '../../../shared/errors/ApiError';
import { searchCaller } from '../../dispatch/search';
import { mcpToolAllowed } from '../../../shared/policies/mcp-tools';
import { searchErrors } from '../../../shared/search/errors';
import { logger } from '../../../shared/logger';
import { WEB_SEARCH_TOOL, callWebSearch } from './web-search-tool';
import { IMAGE_TOOL, IMAGE_TOOL_NAME, RESOURCE_LINKS_SINCE, callGenerateImage } from './image-tool';
import { asToolError, toolError, toolResult } from './result';
import { distinctIds, requestCount } from './batch-ids';
import { McpCancels, cancelledIds } from './cancels';
import { logFailedCall, logState } from '../../middleware/request-log';
import { INVALID_REQUEST, jsonRpcError } from './json-rpc';
import { batchRefusals, invalidMessage, refuseInvalidParams } from './request-params';
import { McpProgress } from './progress';

/**
 * The MCP server behind `/mcp`, built on the official SDK. router.ts loads this module with the first
 * MCP call, so a web pod that never serves one does not hold the SDK (with zod and ajv, about 20 MB).
 */

/** One JSON Schema validator for every per-request server (the SDK builds a new Ajv per server otherwise). */
const validator = new AjvJsonSchemaValidator();

/**
 * Why a `tools/call` request does not satisfy the CallToolRequest schema (the MCP spec, tools, *Error
 * handling*: a protocol error, -32602), in words of its own; undefined when it does. Argument values
 * the tool refuses are tool errors (`isError`), answered by the tool.
 */
function malformedCall(request: unknown): string | undefined {
  const parsed = CallToolRequestSchema.safeParse(request);
  if (parsed.success) return undefined;
  const params = (request as { params?: unknown }).params;
  if (!params || typeof params !== 'object' || Array.isArray(params)) return 'tools/call needs `params` with the `name` of the tool to call.';
  const p = params as Record<string, unknown>;
  if (typeof p.name !== 'string') return '`params.name` must be a string, the name of the tool to call.';
  if ('arguments' in p && (!p.arguments || typeof p.arguments !== 'object' || Array.isArray(p.arguments))) return "`params.arguments` must be an object holding the tool's arguments.";
  const issue = parsed.error.issues[0];
  return `Invalid tools/call params: \`${issue.path.join('.')}\`: ${issue.message}.`;
}

/**
 * `tools/call` as the SDK's protocol layer sees it: the method, and a refinement that refuses a
 * malformed request with -32602 and a message of ours. The SDK parses a request with the handler's
 * schema before its own tools/call check; that check answers McpError's message as it is, "MCP error
 * -32602: Invalid tools/call request: " and zod's issues as JSON, and a schema failure would be -32603
 * (Internal error). An exception thrown in a zod refinement leaves `parse` as it is, so the SDK
 * answers this one's code and message (`search/mcp.test.ts` holds it to that).
 */
const ToolsCallMethod = CallToolRequestSchema.pick({ method: true })
  .loose()
  .superRefine((request) => {
    const why = malformedCall(request);
    if (why) throw invalidParams(why);
  });

/**
 * A JSON-RPC -32602 whose message is the given text: McpError prefixes its message ("MCP error
 * -32602: …"), and the SDK answers `error.message` as it is. The MCP spec's example reads
 * "Unknown tool: <name>".
 */
function invalidParams(message: string): McpError {
  const e = new McpError(ErrorCode.InvalidParams, message);
  e.message = message;
  return e;
}

/** What one HTTP request's tool calls share: job numbering, the calls that met an outage, cancellation. */
interface Calls {
  next: number;
  unavailable: ApiError[];
  /** The caller's JSON-RPC id of a request (a batch's are renamed for the SDK, batch-ids.ts). */
  original: (id: unknown) => unknown;
  cancels: McpCancels;
  /** Progress notifications for the calls that ask for them (progress.ts). */
  progress: McpProgress;
}

/** Each pod's (app context's) registry of tool calls in flight. */
const registries = new WeakMap<AppContext, McpCancels>();
function cancelsOf(ctx: AppContext): McpCancels {
  let c = registries.get(ctx);
  if (!c) registries.set(ctx, (c = new McpCancels(ctx.redis, ctx.sub)));
  return c;
}

/**
 * One MCP server per HTTP request (stateless Streamable HTTP: no session, so any web pod serves any
 * call), bound to the request's authenticated key. Every tool stays listed whatever the policies or
 * switches say; a call that may not run answers an MCP tool error with the gateway's code.
 */
function mcpServer(ctx: AppContext, req: Request, res: Response, calls: Calls): Server {
  const server = new Server({ name: 'inference-gateway', version: '1' }, { capabilities: { tools: {} }, jsonSchemaValidator: validator });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [WEB_SEARCH_TOOL, IMAGE_TOOL] }));
  server.setRequestHandler(ToolsCallMethod, async (raw, extra): Promise<CallToolResult> => {
    const request = CallToolRequestSchema.parse(raw); // checked by the SDK before this runs
    const { name } = request.params;
    if (name !== WEB_SEARCH_TOOL.name && name !== IMAGE_TOOL_NAME) throw invalidParams(`Unknown tool: ${name}`);
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    // the job id and usage request id: unique per call whatever the JSON-RPC id (a batch may repeat one)
    const jobId = `${req.id}-${++calls.next}`;
    const state = logState(res);
    if (state) state.carried = true; // the call has its row (its usage record's, or logFailedCall's): the exchange needs none
    // a notifications/cancelled for this call, on any pod, aborts it, even one that came before it (cancels.ts)
    const call = await calls.cancels.track(req.auth!.keyId, calls.original(extra.requestId), extra.signal);
    const stopProgress = calls.progress.track(request.params._meta?.progressToken, name);
    try {
      await ctx.directory.sync();
      const auth = req.auth!;
      if (!(await mcpToolAllowed(ctx.directory, auth.org, auth.userId, name))) throw searchErrors.toolDisabled(name);
      if (name === WEB_SEARCH_TOOL.name) return toolResult(await callWebSearch({ ...searchCaller(ctx, req), requestId: jobId }, args, call.signal));
      // resource_link blocks exist from 2025-06-18 on; a client on an older version is sent none
      const image = await callGenerateImage(ctx, req, res, args, jobId, call.signal, protocolVersion(req) >= RESOURCE_LINKS_SINCE);
      return toolResult(image.value, image.links);
    } catch (err) {
      const e = asToolError(err);
      logFailedCall(ctx, req, jobId, name, e); // the HTTP exchange succeeds; the call's row says it failed
      if (e.code === 'service_unavailable') calls.unavailable.push(e);
      return toolError(e);
    } finally {
      stopProgress();
      call.done();
    }
  });
  return server;
}

/** The MCP request as a web Request for the SDK's transport: the headers it reads, no body (parsed already). */
function webRequest(req: Request): globalThis.Request {
  const headers = new Headers();
  for (const h of ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id']) {
    const v = req.headers[h];
    if (v !== undefined) headers.set(h, Array.isArray(v) ? v.join(', ') : v);
  }
  // a fixed URL: the path may carry a path key (/a/{key}/mcp), which the SDK has no use for
  return new globalThis.Request('http://gateway.invalid/mcp', { method: 'POST', headers });
}

/** The request's MCP-Protocol-Version; without the header, 2025-03-26 (the transport spec's default). */
function protocolVersion(req: Request): string {
  const v = req.headers['mcp-protocol-version'];
  return (Array.isArray(v) ? v[0] : v)?.trim() || DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
}

/**
 * JSON-RPC batches exist in protocol 2025-03-26 (and before); 2025-06-18 removed them ("The body of
 * the POST request MUST be a single JSON-RPC request, notification, or response"). The version is the
 * one an initialize in the batch negotiates (the version asked when the SDK supports it, else the
 * latest: the SDK server's answer), else the header's. Returns the version that refuses the batch, or
 * undefined; a header version the SDK does not support is left to the transport, which refuses it.
 */
function batchRefusedUnder(req: Request): string | undefined {
  const init = (req.body as unknown[]).find(isInitializeRequest);
  const asked = init?.params.protocolVersion;
  const v = init ? (SUPPORTED_PROTOCOL_VERSIONS.includes(asked!) ? asked! : LATEST_PROTOCOL_VERSION) : protocolVersion(req);
  return SUPPORTED_PROTOCOL_VERSIONS.includes(v) && v >= '2025-06-18' ? v : undefined;
}

/**
 * Serves one POST /mcp (stateless Streamable HTTP): JSON, or an SSE stream once a call that asked
 * for progress has run a while (progress.ts). When every request of the POST is a tool call that met a
 * Redis or Postgres outage, the answer is the REST routes' 503 `service_unavailable` with Retry-After
 * (an HTTP error status is how the MCP transport refuses a POST); otherwise, and on a stream already
 * open, each such call is a tool error with that code and the rest are answered. A batch's elements
 * that are no JSON-RPC message are answered each with its error, among the others' answers.
 */
export async function handleMcp(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const batch = Array.isArray(req.body) ? (req.body as unknown[]) : undefined;
  const refused = batch ? batchRefusedUnder(req) : undefined;
  if (refused) {
    return jsonRpcError(res, 400, INVALID_REQUEST, `JSON-RPC batches are not supported in MCP protocol version ${refused}; send one message per POST.`);
  }
  // JSON-RPC 2.0: "rpc call with an empty Array" is answered with one Invalid Request (the SDK took it as notifications only: 202)
  if (batch && batch.length === 0) return jsonRpcError(res, 400, INVALID_REQUEST, 'Invalid Request: an empty batch.');
  // JSON-RPC 2.0 answers each element of a batch: the ones that are no message get their error, the rest run
  const invalidElements = batch ? batchRefusals(batch) : new Map<number, Record<string, unknown> | null>();
  const cancels = cancelsOf(ctx);
  // not awaited: a subscriber waits out a Redis outage, and the request must not (mcp-outage tests)
  void cancels.listen().catch((err: unknown) => logger.warn({ err }, 'MCP cancel channel not subscribed'));
  // a single message refused as no JSON-RPC (-32600, below) cancels nothing, nor does a batch's element that is none
  const cancelled = cancelledIds(batch ? batch.filter((_, i) => !invalidElements.has(i)) : req.body);
  if (cancelled.length && !invalidMessage(req.body)) await cancels.cancel(req.auth!.keyId, cancelled);
  const { body, restore, original } = distinctIds(req.body, invalidElements);
  const progress = new McpProgress(res, /text\/event-stream/i.test(req.get('accept') ?? ''));
  const calls: Calls = { next: 0, unavailable: [], original, cancels, progress };
  const server = mcpServer(ctx, req, res, calls);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  // a client that leaves aborts the calls in flight (their signals, their jobs) and ends the wait below
  const gone = new Promise<undefined>((resolve) =>
    res.once('close', () => {
      progress.stopAll();
      void transport.close().catch(() => undefined);
      void server.close().catch(() => undefined);
      resolve(undefined);
    }),
  );
  transport.onerror = (err) => logger.warn({ err: err.message }, 'MCP transport error');
  await server.connect(transport);
  refuseInvalidParams(transport); // -32602 for an initialize or tools/list with bad params (request-params.ts)
  const answer = await Promise.race([transport.handleRequest(webRequest(req), { parsedBody: body }), gone]);
  progress.stopAll();
  if (!answer || res.writableEnded || res.destroyed) return;
  // the answer is an SSE stream already (a call sent progress): the answer is its last event, whatever it holds
  if (progress.streaming) return progress.finish(restore(await answer.text()));
  // JSON that is no JSON-RPC message: -32600 Invalid Request, where the transport (after its Accept and
  // Content-Type checks, which keep their 406 and 415) answers -32700 Parse error; nothing ran
  const invalid = answer.status === 400 ? invalidMessage(req.body) : undefined;
  if (invalid) return jsonRpcError(res, invalid.status, invalid.code, invalid.message, invalid.id);
  if (invalidElements.size && (answer.status === 200 || answer.status === 202)) {
    // the batch's answers with its refused elements' among them; nothing ran when every element was refused with an error
    const answers = restore(answer.status === 200 ? await answer.text() : '');
    // nothing to answer (notifications only, one taken out unanswered among them): 202, no body, as the transport spec asks
    if (answers === '[]') return void res.status(202).end();
    // a notification taken out unanswered did not run either: all refused or taken out is 400, as all refused is
    const ran = invalidElements.size < batch!.length;
    res.status(ran ? 200 : 400).type('application/json');
    return void res.end(answers);
  }
  const requests = requestCount(body);
  if (requests > 0 && calls.unavailable.length === requests) throw calls.unavailable[0];
  res.status(answer.status);
  answer.headers.forEach((v, k) => res.setHeader(k, v));
  const text = await answer.text();
  // the transport's refusal of the whole POST (406, 415, an unsupported version) stays as it is
  res.end(invalidElements.size ? text : restore(text));
}
