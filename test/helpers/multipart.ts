import fs from 'fs';
import { expect } from 'chai';
import { env } from './harness';
import { config } from '../../shared/config/env';
import { UsageEvent } from '../../shared/db/models';
import { waitFor } from './wait';
import { usageSettled } from './usage';

export interface Part {
  name: string;
  value?: string | Buffer;
  /** Makes it a file part. */
  filename?: string;
  contentType?: string;
}

export const BOUNDARY = '----gwtestBoundary7MA4YWxkTrZu0gW';

/** A multipart/form-data body, byte for byte, so tests can also send broken ones. */
export function multipartBody(parts: Part[], opts: { close?: boolean } = {}): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disp = `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`;
    const head = `--${BOUNDARY}\r\nContent-Disposition: ${disp}\r\n${p.contentType ? `Content-Type: ${p.contentType}\r\n` : ''}\r\n`;
    chunks.push(Buffer.from(head), Buffer.isBuffer(p.value) ? p.value : Buffer.from(p.value ?? ''), Buffer.from('\r\n'));
  }
  if (opts.close !== false) chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

export interface AudioReply {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
  requestId: string;
}

/** POSTs a multipart body to the test gateway. */
export async function postAudio(path: string, headers: Record<string, string>, body: Buffer, contentType = `multipart/form-data; boundary=${BOUNDARY}`): Promise<AudioReply> {
  const res = await fetch(`${env().gw.url}${path}`, { method: 'POST', headers: { ...headers, 'content-type': contentType }, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text, requestId: res.headers.get('x-service-request-id') ?? '' };
}

/** Files in this run's audio spool directory. */
export function spoolFiles(): string[] {
  try {
    return fs.readdirSync(config().audioSpoolDir);
  } catch {
    return [];
  }
}

/**
 * The spool is empty (allowing a moment for a worker's own delete) and nothing was metered. With
 * other uploads in flight, only this request's spool files (named after its id) must be gone.
 */
export async function expectCleanAndUnmetered(requestId: string, opts: { othersInFlight?: boolean } = {}): Promise<void> {
  expect(requestId, 'request id').to.match(/^req_/);
  const left = () => spoolFiles().filter((f) => !opts.othersInFlight || f.startsWith(requestId));
  await waitFor(() => left().length === 0, 2000);
  expect(left(), 'spool files left').to.deep.equal([]);
  await usageSettled();
  expect(await UsageEvent.count({ where: { requestId } }), 'usage events').to.equal(0);
}

/** The usual valid parts, with a WAV. */
export function transcriptionParts(wav: Buffer, extra: Part[] = [], model = 'sim-whisper'): Part[] {
  return [{ name: 'file', value: wav, filename: 'clip.wav', contentType: 'audio/wav' }, { name: 'model', value: model }, ...extra];
}

export { env };
