import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env } from '../../helpers/harness';
import { call, keyHeader } from '../../helpers/http';
import { waitFor } from '../../helpers/wait';
import { batchSuite } from './helpers';

const BETAS = ['context-management-2025-06-27', 'interleaved-thinking-2025-05-14'];

/**
 * Anthropic: every Messages feature, beta ones included, is available through Message Batches; the
 * SDK's `beta.messages.batches.create({betas})` sends them as `anthropic-beta` on the create. The
 * batch keeps them and each line carries them, as `/v1/messages` passes them to an Anthropic-native
 * upstream (docs/batches.md). Before, the lines ran without them.
 */
describe('Message Batches: the anthropic-beta header of the create reaches every line', function () {
  this.timeout(60_000);
  const s = batchSuite();

  it('beta.messages.batches.create({betas}): the lines on an Anthropic-native upstream are sent with the betas; a batch without betas sends none; a malformed header is 400, nothing stored', async () => {
    const client = s.anthropic as Anthropic;
    const params = { model: 'sim-claude', max_tokens: 8, messages: [{ role: 'user' as const, content: 'beta line' }] };
    const withBetas = await client.beta.messages.batches.create({ requests: [{ custom_id: 'b1', params }], betas: BETAS });
    const ended = (id: string) => waitFor(async () => (await client.messages.batches.retrieve(id)).processing_status === 'ended', 30_000, 200);
    expect(await ended(withBetas.id)).to.equal(true);
    expect((await client.messages.batches.retrieve(withBetas.id)).request_counts.succeeded).to.equal(1);
    const sent = env().sim.log.entries.filter((e) => e.path === '/v1/messages');
    expect(sent.map((e) => e.anthropicBeta)).to.deep.equal([BETAS.join(',')]);

    const plain = await client.messages.batches.create({ requests: [{ custom_id: 'p1', params }] });
    expect(await ended(plain.id)).to.equal(true);
    expect(env().sim.log.entries.filter((e) => e.path === '/v1/messages').map((e) => e.anthropicBeta)).to.deep.equal([BETAS.join(','), undefined]);

    const bad = await call('POST', '/v1/messages/batches', { headers: { ...keyHeader(s.o.key), 'anthropic-version': '2023-06-01', 'anthropic-beta': 'not a list!' }, json: { requests: [{ custom_id: 'x', params }] } });
    expect(bad.status).to.equal(400);
    expect((await client.messages.batches.list()).data.map((b) => b.id).sort()).to.deep.equal([withBetas.id, plain.id].sort());
  });
});
