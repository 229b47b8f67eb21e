import { expect } from 'chai';
import { UsageEvent } from '../../../shared/db/models';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { expectErrorEnvelope } from '../../helpers/errors';

export const post = (key: string, path: string, json: unknown) => call('POST', path, { headers: keyHeader(key), json });

/** Asserts status and code, and that nothing was billed for the request. */
export async function expectRejected(r: Reply, status: number, code: string): Promise<void> {
  expect(r.status, r.text).to.equal(status);
  expectErrorEnvelope(r.text, code); // the code, and never a stack trace
  const id = r.headers.get('x-service-request-id');
  expect(id).to.be.a('string').and.match(/^req_/);
  await usageSettled();
  expect(await UsageEvent.count({ where: { requestId: id! } })).to.equal(0);
}

export function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
}

/** A raw JSON body of exactly `bytes` bytes: `{"model":…,"<field>":"aaaa…"}`. */
export function bodyOfSize(bytes: number, model: string, field: string): string {
  const head = `{"model":"${model}","${field}":"`;
  const tail = '"}';
  return head + 'a'.repeat(bytes - head.length - tail.length) + tail;
}
