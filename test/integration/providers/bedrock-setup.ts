import { env } from '../../helpers/harness';
import { upsertModel, upsertProvider } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';

/** The access key pair of the SigV4 provider: never to appear in an answer. */
export const SECRET_KEY = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
export const CLAUDE = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
export const NOVA = 'amazon.nova-pro-v1:0';

/** Two bedrock providers on the simulator (an access key pair; a Bedrock API key) and a model on each. */
export async function seedBedrock(): Promise<void> {
  await upsertProvider({ name: 'bedrock-sim', kind: 'bedrock', base_url: env().simUrl, region: 'eu-west-1', api_key: JSON.stringify({ access_key_id: 'AKIDSIMULATED', secret_access_key: SECRET_KEY }) });
  await upsertProvider({ name: 'bedrock-sim-apikey', kind: 'bedrock', base_url: env().simUrl, region: 'us-east-1', api_key: 'ABSKsimulatedbedrockkey' });
  const prices = { input_token: 3, output_token: 15 };
  await upsertModel({ id: 'sim-bedrock-claude', provider: 'bedrock-sim', upstream: CLAUDE, capabilities: { chat: true, vision: true }, prices, tokenizer: 'cl100k_base' });
  await upsertModel({ id: 'sim-bedrock-nova', provider: 'bedrock-sim-apikey', upstream: NOVA, capabilities: { chat: true }, prices });
  await bumpEpoch(env().redis);
}

export async function knobs(k: Record<string, unknown>): Promise<void> {
  await fetch(`${env().simUrl}/_sim/knobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(k) });
}
