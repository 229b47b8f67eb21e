import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim, startGateway, type TestGateway } from './harness';
import { buildOrg, type TestOrg } from './factories';

/** What the SDK's call rejects with, or 'answered'. */
export const outcome = (p: Promise<unknown>) => p.then(() => 'answered' as const, (e: unknown) => e);

export function expectRefused(err: unknown, status: number, param: string): void {
  expect(err).to.be.instanceOf(OpenAI.APIError);
  const e = err as InstanceType<typeof OpenAI.APIError>;
  expect([e.status, e.param]).to.deep.equal([status, param]);
}

/** Polls GET /v1/responses/{id} through the SDK until the response leaves queued and in_progress. */
export async function ended(client: OpenAI, id: string): Promise<OpenAI.Responses.Response> {
  let r = await client.responses.retrieve(id);
  const until = Date.now() + 15_000;
  while ((r.status === 'queued' || r.status === 'in_progress') && Date.now() < until) {
    await new Promise((x) => setTimeout(x, 50));
    r = await client.responses.retrieve(id);
  }
  return r;
}


/** What a background-responses suite shares: an org and its client on the test gateway, and a second pod. */
export interface BackgroundSuite {
  o: TestOrg;
  client: OpenAI;
  podB: TestGateway;
}

/** Registers the suite's hooks (a fresh simulator per test, a second pod for the suite); the fields are set once `before` ran. */
export function backgroundSuite(): BackgroundSuite {
  const s = {} as BackgroundSuite;
  beforeEach(resetSim);
  afterEach(() => env().sim.knobs.reset());
  before(async () => {
    s.o = await buildOrg(env().redis);
    s.client = new OpenAI({ apiKey: s.o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    s.podB = await startGateway();
  });
  after(() => s.podB.close());
  return s;
}
