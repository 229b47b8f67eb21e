import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, InitializeRequestSchema, ListToolsRequestSchema, isJSONRPCRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

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
