import OpenAI from 'openai';
import { env, resetSim } from './harness';
import { buildOrg, type TestOrg } from './factories';

/** An org of its own and the official OpenAI client on the test gateway, for a suite. */
export interface OpenAiOrg {
  o: TestOrg;
  c: OpenAI;
}

/** Registers the suite's hooks (a fresh simulator per test; the org built once); the fields are set once `before` ran. */
export function openaiOrg(): OpenAiOrg {
  const s = {} as OpenAiOrg;
  beforeEach(resetSim);
  before(async () => {
    s.o = await buildOrg(env().redis);
    s.c = new OpenAI({ apiKey: s.o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  return s;
}

/** What the simulator was last sent, as text. */
export const lastSent = () => JSON.stringify(env().sim.log.entries.at(-1)!.body);
