import { Model, Provider } from '../../shared/db/models';
import { bumpEpoch } from '../../shared/cache/epoch';
import { importCatalog } from '../../shared/catalog/catalog-ops';
import { env } from './harness';
import { seedBedrock } from '../integration/providers/bedrock-setup';

export const GEMINI_KEY = 'gm-test-platform-key';

/**
 * A `gemini` provider on the simulator with a chat model and an embeddings model, imported from a
 * catalog file as an operator writes it (docs/providers/gemini.md); returns a cleanup.
 */
export async function addGeminiModels(): Promise<() => Promise<void>> {
  const name = `gemini-${Date.now()}`;
  await importCatalog(env().redis, {
    // the simulator plays Google's service, which checks a caller's own key: passthrough allowed
    providers: [{ name, kind: 'gemini', base_url: env().simUrl, api_key: GEMINI_KEY, passthrough: true }],
    models: [
      { id: 'test-gemini', provider: name, upstream: 'sim-gemini-1', display_name: 'Gemini on the simulator', capabilities: { chat: true, vision: true }, context_window: 1_000_000, max_output_tokens: 8192, prices: { input_token: 1, output_token: 2 } },
      { id: 'test-gemini-embed', provider: name, upstream: 'sim-gemini-embed-1', capabilities: { embeddings: true }, context_window: 512, limits: { max_batch_size: 2048, max_input_tokens: 512, dimensions: 256, supports_dimensions: true }, prices: { input_token: 0.02 } },
    ],
  });
  return async () => {
    const provider = await Provider.findOne({ where: { name } });
    await Model.destroy({ where: { providerId: provider!.id } });
    await provider!.destroy();
    await bumpEpoch(env().redis);
  };
}

/**
 * The suite's hooks for the Gemini models (and, with `bedrock`, the Bedrock provider the translated
 * suites also serve): added before the suite's tests, removed after them. Call it in a describe, before
 * hooks that need the models.
 */
export function useGeminiModels(opts: { bedrock?: boolean } = {}): void {
  let cleanup: (() => Promise<void>) | undefined;
  before(async () => {
    if (opts.bedrock) await seedBedrock();
    cleanup = await addGeminiModels();
  });
  after(async () => {
    await cleanup?.();
  });
}
