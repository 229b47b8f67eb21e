import { expect } from 'chai';
import OpenAI from 'openai';
import { CohereClientV2 } from 'cohere-ai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
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

export interface SuiteClients {
  o: TestOrg;
  cohere: CohereClientV2;
  openai: OpenAI;
}

/** An org, and Cohere's v2 and OpenAI's SDKs on its key pointed at the gateway, made in the calling suite's `before`; the simulator reset before each test. */
export function suiteClients(): SuiteClients {
  const c = {} as SuiteClients;
  before(async () => {
    c.o = await buildOrg(env().redis);
    c.cohere = new CohereClientV2({ token: c.o.key, environment: env().gw.url });
    c.openai = new OpenAI({ apiKey: c.o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  beforeEach(resetSim);
  return c;
}
