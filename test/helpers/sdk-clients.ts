import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from './harness';
import { buildOrg } from './factories';
import { ScriptedUpstream } from './scripted-upstream';

/** A scripted Anthropic-native upstream answering one message, and the official SDKs as clients of the gateway. */
export interface ScriptedClaude {
  up: ScriptedUpstream;
  openai: OpenAI;
  anthropic: Anthropic;
}

/**
 * Registers the suite's hooks (a fresh simulator per test; the upstream, an org's key and the clients
 * made once, the upstream closed after); the fields are set once `before` ran.
 */
export function scriptedClaude(message: unknown): ScriptedClaude {
  const s = {} as ScriptedClaude;
  beforeEach(resetSim);
  before(async () => {
    const apiKey = (await buildOrg(env().redis)).key;
    s.openai = new OpenAI({ apiKey, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    s.anthropic = new Anthropic({ apiKey, baseURL: env().gw.url, maxRetries: 0 });
    s.up = await ScriptedUpstream.start('anthropic');
    s.up.otherwise = () => ({ kind: 'json', body: message });
  });
  after(() => s.up.close());
  return s;
}

/** A scripted OpenAI-compatible upstream with a model of its own (a translated upstream), an org's key and the Anthropic SDK as a client of the gateway. */
export interface ScriptedTranslated {
  up: ScriptedUpstream;
  model: string;
  key: string;
  anthropic: Anthropic;
}

/** Registers the suite's hooks as scriptedClaude does; the fields are set once `before` ran. */
export function scriptedTranslated(): ScriptedTranslated {
  const s = {} as ScriptedTranslated;
  beforeEach(resetSim);
  before(async () => {
    s.up = await ScriptedUpstream.start('openai');
    s.model = await s.up.model();
    s.key = (await buildOrg(env().redis)).key;
    s.anthropic = new Anthropic({ apiKey: s.key, baseURL: env().gw.url, maxRetries: 0 });
  });
  after(() => s.up.close());
  return s;
}
