import { expect } from 'chai';
import type Anthropic from '@anthropic-ai/sdk';
import { waitFor } from '../../helpers/wait';
import { batchSuite } from './helpers';

/**
 * A Message Batch's succeeded lines say they were served on the batch tier, `usage.service_tier:
 * "batch"` (SDK 1.16 Usage.service_tier: "If the request used the priority, standard, or batch
 * tier"), as Anthropic's batch results do; a synchronous answer stays `standard`. Before, a line's
 * message was the synchronous answer unchanged: `standard` from a translated upstream, and whatever
 * the Anthropic-native upstream said of the synchronous call (the simulator: nothing).
 */
describe('Message Batches: succeeded lines report the batch service tier', function () {
  this.timeout(60_000);
  const s = batchSuite();

  it('every succeeded message, Anthropic-native and translated, has usage.service_tier "batch"; the synchronous answer keeps "standard"', async () => {
    const params = (model: string) => ({ model, max_tokens: 8, messages: [{ role: 'user' as const, content: 'tier line' }] });
    const batch = await s.anthropic.messages.batches.create({ requests: [{ custom_id: 'native', params: params('sim-claude') }, { custom_id: 'translated', params: params('sim-chat') }] });
    await waitFor(async () => (await s.anthropic.messages.batches.retrieve(batch.id)).processing_status === 'ended', 30_000, 200);
    const tiers: Record<string, unknown> = {};
    for await (const r of await s.anthropic.messages.batches.results(batch.id)) {
      expect(r.result.type, r.custom_id).to.equal('succeeded');
      const m = (r.result as Anthropic.Messages.MessageBatchSucceededResult).message;
      tiers[r.custom_id] = m.usage.service_tier;
      expect(m.usage.output_tokens, r.custom_id).to.be.greaterThan(0);
    }
    expect(tiers).to.deep.equal({ native: 'batch', translated: 'batch' });
    const sync = await s.anthropic.messages.create(params('sim-chat'));
    expect(sync.usage.service_tier).to.equal('standard');
  });
});
