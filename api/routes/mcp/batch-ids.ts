/**
 * A JSON-RPC batch may repeat an id (JSON-RPC does not forbid it), but the SDK's transport and
 * protocol key every pending request by its id: of two requests with one id, one answer is lost and
 * its handler keeps running unobserved. So each request of a batch is handed to the SDK under an id
 * of its own (its position), and the answers get the caller's ids back.
 */

type Message = Record<string, unknown>;

/** What the SDK accepts as a request id (RequestIdSchema); anything else is left for it to refuse. */
function validId(id: unknown): id is string | number {
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));
}

function isRequest(m: unknown): m is Message {
  return !!m && typeof m === 'object' && !Array.isArray(m) && typeof (m as Message).method === 'string' && validId((m as Message).id);
}

/** Requests (not notifications, not responses) in a POST body, batch or single message. */
export function requestCount(body: unknown): number {
  return (Array.isArray(body) ? body : [body]).filter(isRequest).length;
}

/**
 * A `notifications/cancelled` naming a numeric id. In a batch the SDK would match that id against the
 * renamed ones, positions, and abort whichever request of the batch sits at that position: its answer
 * withheld, the transport waited for it and the POST never ended (its other answers, billed, never
 * delivered). The gateway cancels by the caller's ids itself (cancels.ts, before the SDK runs), so the
 * SDK is handed the id as a string, which no renamed request carries.
 */
function isNumberedCancel(m: unknown): m is Message & { params: Message & { requestId: number } } {
  if (!m || typeof m !== 'object' || Array.isArray(m) || (m as Message).method !== 'notifications/cancelled') return false;
  const params = (m as Message).params;
  return !!params && typeof params === 'object' && typeof (params as Message).requestId === 'number';
}

export interface DistinctIds {
  /** The body with each request of a batch renamed to its position. */
  body: unknown;
  /** The SDK's answer (JSON text) with the caller's ids put back, a batch's always as an array. */
  restore(answer: string): string;
  /** The caller's id of a request the SDK sees under `id`. */
  original(id: unknown): unknown;
}

/**
 * `refused`: the batch's elements answered by the route itself (no JSON-RPC message), by position,
 * with their error responses, or null for one that gets none (a notification, request-params.ts,
 * batchRefusals). They are kept from the SDK, and restore() puts their answers among the SDK's in the
 * batch's order (a batch of nothing else gets them alone: the SDK, handed no message, answers
 * nothing; `[]` when no element has an answer).
 */
export function distinctIds(body: unknown, refused: ReadonlyMap<number, unknown> = new Map()): DistinctIds {
  if (!Array.isArray(body)) return { body, restore: (answer) => answer, original: (id) => id };
  const original = new Map<number, string | number>();
  const renamed: unknown[] = [];
  body.forEach((m: unknown, i) => {
    if (refused.has(i)) return;
    if (isNumberedCancel(m)) return void renamed.push({ ...m, params: { ...m.params, requestId: `caller:${m.params.requestId}` } });
    if (!isRequest(m)) return void renamed.push(m);
    original.set(i, m.id as string | number);
    renamed.push({ ...m, id: i });
  });
  const back = (m: unknown): unknown => {
    if (!m || typeof m !== 'object') return m;
    const id = (m as Message).id;
    return typeof id === 'number' && original.has(id) ? { ...(m as Message), id: original.get(id) } : m;
  };
  /** The SDK's answers (an array, one response or none) and the refusals, in the batch's order. */
  const woven = (answer: string): unknown[] => {
    const parsed = answer ? (JSON.parse(answer) as unknown) : [];
    const byPosition = new Map<number, unknown>();
    const others: unknown[] = [];
    for (const a of Array.isArray(parsed) ? parsed : [parsed]) {
      const id = (a as Message | null)?.id;
      if (typeof id === 'number' && original.has(id) && !byPosition.has(id)) byPosition.set(id, back(a));
      else others.push(a);
    }
    const out: unknown[] = [];
    for (let i = 0; i < body.length; i++) {
      if (refused.get(i)) out.push(refused.get(i));
      else if (byPosition.has(i)) out.push(byPosition.get(i));
    }
    return out.concat(others);
  };
  return {
    body: renamed,
    original: (id) => (typeof id === 'number' && original.has(id) ? original.get(id) : id),
    restore(answer) {
      if (refused.size) return JSON.stringify(woven(answer));
      if (!answer) return answer;
      const parsed = JSON.parse(answer) as unknown;
      if (Array.isArray(parsed)) return JSON.stringify(parsed.map(back));
      // JSON-RPC 2.0 answers a batch with an array, one holding a single response too (a batch of one
      // request, or of a request and notifications); the SDK sends a lone response bare. A refusal of
      // the whole POST (`id: null`) stays an object.
      const id = (parsed as Message | null)?.id;
      return JSON.stringify(typeof id === 'number' && original.has(id) ? [back(parsed)] : back(parsed));
    },
  };
}
