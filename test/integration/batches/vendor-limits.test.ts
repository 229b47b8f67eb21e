import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { QueryTypes } from 'sequelize';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { expectErrorEnvelope } from '../../helpers/errors';
import { db } from '../../../shared/db/sequelize';
import { batchLimits } from '../../../shared/batches/limits';
import type { OrgContext } from '../../../shared/tenancy/directory';
import * as store from '../../../shared/batches/store';
import { jsonl, uploadBatchFile } from './helpers';

const MiB = 1024 * 1024;
const requests = (n: number) => Array.from({ length: n }, (_, i) => ({ custom_id: `r${i}`, params: { model: 'sim-claude', max_tokens: 1, messages: [{ role: 'user' as const, content: 'x' }] } }));

/**
 * Without a plan's or org's entitlement, each dialect's batches take its vendor's own limits: OpenAI's
 * Batch API 50,000 requests and a 200 MB input file, Anthropic's Message Batches 100,000 requests or
 * 256 MB (docs/batches.md, "Limits"). Before, both dialects had OpenAI's 50,000 and a 100 MiB cap.
 */
describe("batches: each dialect's default limits are its vendor's", function () {
  this.timeout(120_000);
  beforeEach(resetSim);

  it('the defaults: OpenAI 50,000 requests and 200 MiB, Message Batches 100,000 requests and 256 MiB; an entitlement sets both', () => {
    const plain = { entitlements: {} } as unknown as OrgContext;
    expect(batchLimits(plain, 'openai')).to.include({ maxLines: 50_000, maxFileBytes: 200 * MiB });
    expect(batchLimits(plain, 'anthropic')).to.include({ maxLines: 100_000, maxFileBytes: 256 * MiB });
    const capped = { entitlements: { batch_max_lines: 7, batch_max_file_bytes: 4096 } } as unknown as OrgContext;
    expect(batchLimits(capped, 'anthropic')).to.include({ maxLines: 7, maxFileBytes: 4096 });
  });

  it('a Message Batch of 50,001 requests is taken (over OpenAI\'s count, within Anthropic\'s); 100,001 is 400 batch_too_many_lines; an OpenAI file of 50,001 lines is refused', async () => {
    const o = await buildOrg(env().redis);
    const anthropic = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0, timeout: 110_000 });
    const mb = await anthropic.messages.batches.create({ requests: requests(50_001) });
    try {
      expect(mb.request_counts.processing).to.equal(50_001);
      const over = await call('POST', '/v1/messages/batches', { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' }, json: { requests: requests(100_001) } });
      expect(over.status, over.text.slice(0, 300)).to.equal(400);
      expectErrorEnvelope(over.text, 'batch_too_many_lines');
      expect(over.body.error.message).to.include('100000');
      const openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
      const line = { custom_id: 'x', method: 'POST', url: '/v1/embeddings', body: { model: 'sim-embed', input: 'x' } };
      const file = await uploadBatchFile(openai, jsonl(Array.from({ length: 50_001 }, (_, i) => ({ ...line, custom_id: `x${i}` }))));
      const r = await call('POST', '/v1/batches', { headers: keyHeader(o.key), json: { input_file_id: file, endpoint: '/v1/embeddings', completion_window: '24h' } });
      expect(r.status).to.equal(400);
      expectErrorEnvelope(r.text, 'batch_too_many_lines');
      const [n] = await db().query<{ n: string }>('SELECT count(*) AS n FROM batches WHERE org_id = :org', { type: QueryTypes.SELECT, replacements: { org: o.org.id } });
      expect(Number(n.n), 'only the Message Batch was stored').to.equal(1);
    } finally {
      // ended here, so no later suite's runner works through its lines
      await store.closePending(mb.id, 'canceled', 0, { route: '/v1/messages', dialect: 'anthropic' });
      await store.transition(mb.id, ['in_progress'], 'cancelled');
    }
  });
});
