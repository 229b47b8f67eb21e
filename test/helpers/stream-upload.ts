import http from 'http';
import { env } from './harness';
import type { Reply } from './http';
import { jsonOrUndefined } from './json-text';

export interface StreamedReply extends Reply {
  /** Body bytes the client had written when the answer's headers arrived. */
  sentWhenAnswered: number;
  /** Body bytes the client would have sent in all. */
  total: number;
}

/**
 * POSTs a chunked body (no Content-Length) of `head` followed by filler up to `total` bytes, written
 * as fast as the server reads it, and stops writing as soon as the answer arrives. A server that
 * refuses while reading answers with `sentWhenAnswered` well below `total`; one that buffers the
 * whole body first can only answer once all of it was sent.
 */
export function streamUntilAnswered(path: string, headers: Record<string, string>, head: Buffer, total: number): Promise<StreamedReply> {
  const filler = Buffer.alloc(256 * 1024, 'a');
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    let wake: (() => void) | undefined;
    const req = http.request(`${env().gw.url}${path}`, { method: 'POST', headers: { ...headers, 'transfer-encoding': 'chunked' } });
    req.on('response', (res) => {
      answered = true;
      const sentWhenAnswered = sent;
      wake?.();
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const body = jsonOrUndefined(text);
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
        req.destroy();
        resolve({ status: res.statusCode ?? 0, headers: h, body, text, sentWhenAnswered, total });
      });
      res.on('error', reject);
    });
    req.on('error', (err) => {
      if (!answered) reject(err); // after the answer, a reset of the rest of the upload is expected
    });
    void (async () => {
      const write = async (b: Buffer) => {
        sent += b.length;
        if (!req.write(b)) await new Promise<void>((r) => ((wake = r), req.once('drain', r)));
      };
      await write(head);
      while (!answered && sent < total && !req.destroyed) await write(filler.subarray(0, Math.min(filler.length, total - sent)));
      if (!answered && !req.destroyed) req.end();
    })().catch(() => undefined);
  });
}
