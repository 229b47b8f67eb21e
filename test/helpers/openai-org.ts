import OpenAI from 'openai';
import { env, resetSim } from './harness';
import { buildOrg, type TestOrg } from './factories';
import { Project } from '../../shared/db/models';
import { createApiKey } from '../../shared/tenancy/ops';

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

/** An org with a second project (B) and a key bound to each project (A is the org's own), and the official client for any key. */
export interface TwoProjects {
  o: TestOrg;
  projectB: string;
  keyA: string;
  keyB: string;
  client: (key: string, headers?: Record<string, string>) => OpenAI;
}

/** Registers the suite's hooks (a fresh simulator per test; the org, project and keys made once); the fields are set once `before` ran. */
export function twoProjects(): TwoProjects {
  const s = { client: (key: string, headers?: Record<string, string>) => new OpenAI({ apiKey: key, baseURL: `${env().gw.url}/v1`, maxRetries: 0, defaultHeaders: headers }) } as TwoProjects;
  beforeEach(resetSim);
  before(async () => {
    s.o = await buildOrg(env().redis);
    s.projectB = (await Project.create({ orgId: s.o.org.id, name: 'Other', slug: 'other' })).id;
    s.keyA = (await createApiKey(env().redis, { orgId: s.o.org.id, projectId: s.o.project.id, name: 'project a' })).key;
    s.keyB = (await createApiKey(env().redis, { orgId: s.o.org.id, projectId: s.projectB, name: 'project b' })).key;
  });
  return s;
}
