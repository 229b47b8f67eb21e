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

/**
 * A POST body that is JSON but not a JSON-RPC message (no `jsonrpc: "2.0"`, a `method` that is not a
 * string, an id that is null or a fraction, a bare number in a batch): JSON-RPC 2.0's -32600 *Invalid
 * Request* ("The JSON sent is not a valid Request object"), HTTP 400, where the SDK's transport answers
 * -32700 *Parse error*, which JSON-RPC keeps for text that is not JSON. Answered for the whole POST (a
 * batch included), with the message's id when it has a valid one (a string or an integer), else null;
 * a single request with positional params is -32602 under its id (positionalParams). Undefined when
 * every message is valid.
 */
export function invalidMessage(body: unknown): InvalidMessage | undefined {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  const bad = messages.findIndex((m) => !JSONRPCMessageSchema.safeParse(m).success);
  if (bad < 0) return undefined;
  const m = messages[bad];
  if (!Array.isArray(body) && positionalParams(m)) {
    return { status: 200, code: ErrorCode.InvalidParams, id: m.id, message: `Invalid params: MCP takes \`params\` as an object of named values, not an array.` };
  }
  const rawId = m && typeof m === 'object' && !Array.isArray(m) ? (m as { id?: unknown }).id : undefined;
  const what = 'not a JSON-RPC 2.0 message (`jsonrpc: "2.0"` with a string `method` and `params`, when present, an object; or a response; an `id`, when present, a string or an integer).';
  return {
    status: 400,
    code: ErrorCode.InvalidRequest,
    message: Array.isArray(body) ? `Invalid Request: message ${bad} of the batch is ${what}` : `Invalid Request: the body is ${what}`,
    id: !Array.isArray(body) && validId(rawId) ? rawId : null,
  };
}
