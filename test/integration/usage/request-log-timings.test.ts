import { expect } from 'chai';
import { QueryTypes } from 'sequelize';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { db } from '../../../shared/db/sequelize';

/**
 * A request that a worker took and that then failed or was cancelled has the timings it went
 * through in its row (written by its pod): the lane admission (`lane_ms`) and the job's time in the
 * queue (`queue_ms`, sent back by the worker with its error).
 */
type Row = Record<string, unknown>;
async function rowOf(rid: string): Promise<Row | undefined> {
  await usageSettled();
  return (await db().query<Row>('SELECT status, error_code, lane_ms, queue_ms, ttfb_ms, total_ms, attempts FROM request_logs WHERE request_id = :rid',
    { type: QueryTypes.SELECT, replacements: { rid } }))[0];
}

describe('request log: the timings of a request that failed or was cancelled after admission', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => { o = await buildOrg(env().redis); });
  const streamed = (signal?: AbortSignal) => fetch(`${env().gw.url}/v1/chat/completions`, { method: 'POST', signal,
    headers: { ...keyHeader(o.key), 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-chat', stream: true, messages: [{ role: 'user', content: 'x' }] }) });
  const timed = (r: Row | undefined, cols: string[]) => {
    for (const c of cols) expect(r?.[c], c).to.be.a('number').and.at.least(0);
    expect(Number(r!.queue_ms ?? 0) + Number(r!.lane_ms ?? 0)).to.be.at.most(Number(r!.total_ms));
  };

  it('an upstream that fails every attempt: lane and queue time', async () => {
    env().sim.knobs.set('sim-chat-1', { status: 500 });
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'x' }] } });
    expect(r.status).to.be.at.least(500);
    const row = await rowOf(r.headers.get('x-service-request-id')!);
    expect(row!.status).to.equal(r.status);
    timed(row, ['lane_ms', 'queue_ms', 'total_ms']);
  });

  it('a stream cut after its first chunk: lane, queue and first-byte time', async () => {
    env().sim.knobs.set('sim-chat-1', { dropAfterChunks: 3 });
    const res = await streamed();
    await res.text();
    const row = await rowOf(res.headers.get('x-service-request-id')!);
    expect(row!.status).to.be.at.least(500);
    timed(row, ['lane_ms', 'queue_ms', 'ttfb_ms', 'total_ms']);
  });

  it('a client that cancels mid-stream: 499 with its lane time', async () => {
    env().sim.knobs.set('sim-chat-1', { tokenDelayMs: 100, outputWords: 40 });
    const ac = new AbortController();
    const res = await streamed(ac.signal);
    const reader = res.body!.getReader();
    await reader.read();
    await reader.read();
    ac.abort();
    const rid = res.headers.get('x-service-request-id')!;
    await waitFor(async () => !!(await rowOf(rid)), 5_000, 50);
    const row = await rowOf(rid);
    expect(row).to.include({ status: 499, error_code: 'client_closed_request' });
    timed(row, ['lane_ms', 'ttfb_ms', 'total_ms']);
  });
});
