import { Model, Provider } from '../../shared/db/models';
import { bumpEpoch } from '../../shared/cache/epoch';
import { encrypt } from '../../shared/crypto';
import { env } from './harness';

export const GEMINI_KEY = 'gm-test-platform-key';

/** A `gemini` provider on the simulator with a chat model and an embeddings model; returns a cleanup. */
export async function addGeminiModels(): Promise<() => Promise<void>> {
  const provider = await Provider.create({ name: `gemini-${Date.now()}`, kind: 'gemini', baseUrl: env().simUrl, apiKeyEncrypted: encrypt(GEMINI_KEY) });
  await Model.bulkCreate([
    { publicId: 'test-gemini', providerId: provider.id, upstreamName: 'sim-gemini-1', displayName: 'Gemini on the simulator', capabilities: { chat: true, vision: true }, contextWindow: 1_000_000, maxOutputTokens: 8192, prices: { input_token: 1, output_token: 2 } },
    { publicId: 'test-gemini-embed', providerId: provider.id, upstreamName: 'sim-gemini-embed-1', displayName: null, capabilities: { embeddings: true }, contextWindow: 512, maxOutputTokens: null, limits: { max_batch_size: 64, max_input_tokens: 512, dimensions: 256, supports_dimensions: true }, prices: { input_token: 0.02 } },
  ]);
  await bumpEpoch(env().redis);
  return async () => {
    await Model.destroy({ where: { providerId: provider.id } });
    await provider.destroy();
    await bumpEpoch(env().redis);
  };
}
