import { env } from './harness';
import { jsonOrUndefined } from './json-text';

export interface Reply {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

/** A request to the test gateway (or `base`), with the body parsed as JSON when it is JSON. */
export async function call(method: string, path: string, opts: { headers?: Record<string, string>; json?: unknown; raw?: string; base?: string } = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  let body: string | undefined;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['content-type'] ??= 'application/json';
  } else if (opts.raw !== undefined) body = opts.raw;
  const res = await fetch(`${opts.base ?? env().gw.url}${path}`, { method, headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: jsonOrUndefined(text), text };
}

export const keyHeader = (key: string) => ({ 'SERVICE-API-KEY': key });
