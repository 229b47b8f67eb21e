import crypto from 'crypto';
import { expect } from 'chai';
import { QueryTypes } from 'sequelize';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { usageSettled } from '../../helpers/usage';
import { pools } from '../../helpers/pools';
import { db } from '../../../shared/db/sequelize';
import { appendRequestLog, appendUsage } from '../../../shared/metering/usage-outbox';
import type { UsageRecord } from '../../../shared/metering/usage';
import type { RequestLogEntry } from '../../../shared/metering/request-log';

/**
 * A request whose job delivered (its usage record logs it as 200) and that then failed (a
 * /v1/responses answer that could not be stored): the pod's failure entry has the same key. The row
 * says the failure the client was answered, with the job's tokens, whichever entry the drainer
 * writes first, or both in one batch, and writing either again changes nothing.
 */
describe('request log: a failure after a delivered job', () => {
  let o: TestOrg;
  before(async () => { o = await buildOrg(env().redis); });

  const pair = () => {
    const requestId = `req_merge_${crypto.randomBytes(6).toString('hex')}`;
    const receivedAt = Date.now() - 50;
    const ctx = { receivedAt, route: '/v1/responses', dialect: 'openai-responses', userId: null };
    const who = { requestId, orgId: o.org.id, projectId: null, apiKeyId: null, model: 'sim-chat', lane: 'interactive' };
    const usage: UsageRecord = { ...who, modality: 'chat', inputTokens: 11, outputTokens: 7,
      log: { ...ctx, status: 200, attempts: 1, deployment: 'sim-chat-1', queueMs: 3, ttfbMs: 20, totalMs: 30 } };
    const failure: RequestLogEntry = { ...ctx, ...who, status: 500, errorCode: 'response_store_failed', totalMs: 45 };
    return { requestId, usage, failure };
  };
  const row = async (rid: string) => {
    await usageSettled();
    const rows = await db().query<Record<string, unknown>>('SELECT * FROM request_logs WHERE request_id = :rid', { type: QueryTypes.SELECT, replacements: { rid } });
    expect(rows).to.have.length(1);
    return rows[0];
  };
  const expected = { status: 500, error_code: 'response_store_failed', input_tokens: 11, output_tokens: 7, deployment: 'sim-chat-1', attempts: 1, queue_ms: 3, ttfb_ms: 20, total_ms: 45 };

  for (const order of ['usage first', 'failure first'] as const) {
    it(`${order}, in two batches, then both again`, async () => {
      const p = pair();
      const steps = order === 'usage first' ? [() => appendUsage(env().redis, p.usage), () => appendRequestLog(env().redis, p.failure)] : [() => appendRequestLog(env().redis, p.failure), () => appendUsage(env().redis, p.usage)];
      for (const s of steps) {
        await s();
        await usageSettled();
      }
      expect(await row(p.requestId)).to.include(expected);
      for (const s of steps) await s();
      expect(await row(p.requestId)).to.include(expected);
    });
  }

  it('both in one batch', async () => {
    const p = pair();
    await usageSettled();
    await pools().drainer.stop();
    try {
      await appendUsage(env().redis, p.usage);
      await appendRequestLog(env().redis, p.failure);
    } finally {
      await pools().drainer.start();
    }
    expect(await row(p.requestId)).to.include(expected);
  });
});
