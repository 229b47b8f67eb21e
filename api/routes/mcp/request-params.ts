import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, InitializeRequestSchema, JSONRPCMessageSchema, ListToolsRequestSchema, isJSONRPCRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * The requests with params the server answers besides tools/call (ping's only param, `_meta`, is
 * checked by the transport) (checked by its own schema in server.ts), with
 * the schema of each. The SDK parses a request with its handler's schema and answers a failure as
 * -32603 *Internal error* with zod's issues as JSON for the message (an `initialize` without
 * `params`, a `tools/list` whose `cursor` is a number): the client's mistake, reported as the
 * server's, in a message meant for no one.
 */
const SCHEMAS = new Map<string, { safeParse(v: unknown): { success: boolean; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } } }>([
  ['initialize', InitializeRequestSchema],
  ['tools/list', ListToolsRequestSchema],
]);

/** Why a request of a known method does not satisfy its schema, in words of the gateway's; undefined when it does. */
export function invalidRequestParams(message: JSONRPCMessage): string | undefined {
  if (!isJSONRPCRequest(message)) return undefined;
  const parsed = SCHEMAS.get(message.method)?.safeParse(message);
  if (!parsed || parsed.success) return undefined;
  const issue = parsed.error!.issues[0];
  return `Invalid ${message.method} params: \`${issue.path.map(String).join('.')}\`: ${issue.message}.`;
}

/**
 * Puts the check in front of the server connected to the transport: such a request is answered
 * JSON-RPC -32602 *Invalid params* (the spec's code for it) under its id and never reaches the SDK;
 * every other message goes on as it came.
 */
export function refuseInvalidParams(transport: Transport): void {
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const why = invalidRequestParams(message);
    if (why && isJSONRPCRequest(message)) {
      void transport.send({ jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InvalidParams, message: why } }).catch(() => undefined);
      return;
    }
    deliver?.(message, extra);
  };
}

/** Why a POST's JSON is refused before the SDK runs anything: the HTTP status, the JSON-RPC error and the id it answers. */
export interface InvalidMessage {
  status: number;
  code: number;
  message: string;
  id: string | number | null;
}

const validId = (id: unknown): id is string | number => typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));

/**
 * A JSON-RPC request whose `params` is an array: JSON-RPC 2.0 allows params by position, so it is a
 * valid Request object, but MCP's params are an object of named values: -32602 *Invalid params* under
 * its id, as any request whose params fail its method is answered (HTTP 200, request-params above).
 */
function positionalParams(m: unknown): m is { id: string | number; method: string; params: unknown[] } {
  if (!m || typeof m !== 'object' || Array.isArray(m)) return false;
  const r = m as Record<string, unknown>;
  if (r.jsonrpc !== '2.0' || typeof r.method !== 'string' || !validId(r.id) || !Array.isArray(r.params)) return false;
  return JSONRPCMessageSchema.safeParse({ jsonrpc: r.jsonrpc, id: r.id, method: r.method }).success;
}

const NOT_A_MESSAGE = 'not a JSON-RPC 2.0 message (`jsonrpc: "2.0"` with a string `method` and `params`, when present, an object; or a response; an `id`, when present, a string or an integer).';

/**
 * Why one message is refused before the SDK runs it, undefined when it is a JSON-RPC message: a
 * request with params by position is -32602 under its id (positionalParams), anything else that is
 * no message -32600 *Invalid Request*, under its id when it has a valid one (a string or an integer),
 * else null. `position`: its index in a batch.
 */
function refusal(m: unknown, position?: number): InvalidMessage | undefined {
  if (JSONRPCMessageSchema.safeParse(m).success) return undefined;
  if (positionalParams(m)) {
    return { status: 200, code: ErrorCode.InvalidParams, id: m.id, message: `Invalid params: MCP takes \`params\` as an object of named values, not an array.` };
  }
  const rawId = m && typeof m === 'object' && !Array.isArray(m) ? (m as { id?: unknown }).id : undefined;
  return {
    status: 400,
    code: ErrorCode.InvalidRequest,
    message: position === undefined ? `Invalid Request: the body is ${NOT_A_MESSAGE}` : `Invalid Request: message ${position} of the batch is ${NOT_A_MESSAGE}`,
    id: validId(rawId) ? rawId : null,
  };
}

/**
 * A POST body of one message that is JSON but not a JSON-RPC message (no `jsonrpc: "2.0"`, a `method`
 * that is not a string, an id that is null or a fraction): JSON-RPC 2.0's -32600 *Invalid Request*
 * ("The JSON sent is not a valid Request object"), HTTP 400, where the SDK's transport answers -32700
 * *Parse error*, which JSON-RPC keeps for text that is not JSON; a request with positional params is
 * -32602 under its id (HTTP 200). Undefined when the message is valid, and for a batch, whose elements
 * are answered one by one (batchRefusals).
 */
export function invalidMessage(body: unknown): InvalidMessage | undefined {
  return Array.isArray(body) ? undefined : refusal(body);
}

/**
 * A JSON-RPC 2.0 notification (a Request object without an `id` member: `jsonrpc: "2.0"`, a string
 * `method`) whose `params` are by position: a valid JSON-RPC message that MCP, whose params are named,
 * has no use for. JSON-RPC answers no notification ("The Server MUST NOT reply to a Notification,
 * including those that are within a batch request"), so in a batch it is taken out, unanswered.
 */
function positionalNotification(m: unknown): boolean {
  if (!m || typeof m !== 'object' || Array.isArray(m)) return false;
  const r = m as Record<string, unknown>;
  return r.jsonrpc === '2.0' && typeof r.method === 'string' && !('id' in r) && Array.isArray(r.params);
}

/**
 * The elements of a batch kept from the SDK, by position, each with its JSON-RPC error response, or
 * null for one that gets none. JSON-RPC 2.0 (*Batch*) answers each element that is no JSON-RPC
 * message: an Invalid Request (or Invalid params) for the bad ones, "Response objects" for the rest
 * ("rpc call Batch (invalid but not empty)": `[1,2,3]` is answered with three errors), so one bad
 * element no longer refuses the whole POST. A notification with params by position is taken out
 * unanswered (positionalNotification): before, it was answered -32600 with `id: null`.
 */
export function batchRefusals(body: unknown[]): Map<number, Record<string, unknown> | null> {
  const out = new Map<number, Record<string, unknown> | null>();
  body.forEach((m, i) => {
    const why = refusal(m, i);
    if (why) out.set(i, positionalNotification(m) ? null : { jsonrpc: '2.0', id: why.id, error: { code: why.code, message: why.message } });
  });
  return out;
}
