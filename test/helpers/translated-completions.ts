import OpenAI from 'openai';
import { env, resetSim } from './harness';
import { buildOrg, type TestOrg } from './factories';
import { UsageEvent } from '../../shared/db/models';
import { usageSettled } from './usage';
import { useGeminiModels } from './gemini-model';

/** Models whose legacy completions go through the chat translation: Anthropic-native, Gemini, Bedrock. */
export const TRANSLATED_MODELS = ['sim-claude', 'test-gemini', 'sim-bedrock-claude'];

/** An org with the official openai client as its gateway client, and its usage events counted. */
export interface CompletionsSuite {
  o: TestOrg;
  client: OpenAI;
  /** The org's usage events once the outbox is drained. */
  billed(): Promise<number>;
}

/**
 * Registers a legacy completions suite's hooks (a fresh simulator per test; the Bedrock and Gemini
 * models, an org and its client made once, the Gemini models removed after); the fields are set once
 * `before` ran.
 */
export function translatedCompletionsSuite(): CompletionsSuite {
  const s = {} as CompletionsSuite;
  s.billed = async () => {
    await usageSettled();
    return UsageEvent.count({ where: { orgId: s.o.org.id } });
  };
  beforeEach(resetSim);
  useGeminiModels({ bedrock: true });
  before(async () => {
    s.o = await buildOrg(env().redis);
    s.client = new OpenAI({ apiKey: s.o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  return s;
}
