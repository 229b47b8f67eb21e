import { spawn, type ChildProcess } from 'child_process';
import path from 'path';
import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { QueryTypes } from 'sequelize';
import { db } from '../../../shared/db/sequelize';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';
import { startBatchWorker } from '../../../workers/batch/main';
import { keys } from '../../../shared/redis/keys';
import { periodOf } from '../../../shared/search/period';
import { freePort } from '../../../scripts/services/free-port';
import type { BatchWorker } from './helpers';

const count = async (sql: string, orgId: string) => (await db().query<{ n: number }>(sql, { type: QueryTypes.SELECT, replacements: { orgId } }))[0].n;

/**
 * A batch runner killed (kill -9) after a line's paid web search ran and before the line was recorded:
 * the org's search counter in Redis counted that search, and nothing would ever give it back or
 * charge it. The line's next runner counts a search of the same id once (the held marker passes to
 * it) and gives back what the dead attempt left once the line is recorded or closed, so the counter
 * equals the ledger again without a rebuild (docs/batches.md "Searches"). Before, it stayed one high
 * (two searches counted for one charged, or one counted for none) until the counters were rebuilt.
 */
describe('batches: a runner killed between a line\'s search and its record leaves the search counter right', function () {
  this.timeout(120_000);
  let up: SearchUpstream;
  let o: TestOrg;
  let anthropic: Anthropic;
  let child: ChildProcess | undefined;
  let worker: BatchWorker | undefined;
  beforeEach(async () => {
    resetSim();
    // the search answers; the model's next turn is held, so the line is not recorded when the runner dies
    let first = true;
    up = await startSearchUpstream(() => {
      if (first) env().sim.knobs.set('*', { hold: true });
      first = false;
      return 0;
    });
    o = await buildOrg(env().redis);
    await useSearchProvider(o.org.id, up, 'batch-crash-search');
    anthropic = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
  });
  afterEach(async () => {
    env().sim.knobs.reset();
    if (child && child.exitCode === null) child.kill('SIGKILL');
    child = undefined;
    await worker?.close();
    worker = undefined;
    await up.close();
  });

  const counter = async () => Number((await env().redis.get(keys.searchCount(o.org.id, periodOf(), 'all'))) ?? 0);
  const ledger = () => count('SELECT count(*)::int AS n FROM search_usage WHERE org_id = :orgId', o.org.id);
  const reservations = () => count('SELECT count(*)::int AS n FROM search_reservations WHERE org_id = :orgId', o.org.id);

  /** A one-line Message Batch whose line searches, run by a runner process killed once the search ran. */
  async function searchedThenKilled(): Promise<string> {
    const mb = await anthropic.messages.batches.create({
      requests: [{ custom_id: 's1', params: { model: 'sim-chat', max_tokens: 300, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'Please search for honey bees' }] } }],
    });
    child = spawn(process.execPath, [path.resolve(__dirname, '../../../workers/batch/main.js')], {
      env: { ...process.env, LOG_LEVEL: 'info', BATCH_CLAIM_STALE_MS: '1500', METRICS_PORT: String(await freePort()) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout!.resume();
    expect(await waitFor(async () => up.queries.length === 1 && env().sim.log.entries.length >= 2, 30_000, 50), 'the search ran and the next turn was sent').to.equal(true);
    expect(await counter(), 'the search is counted').to.equal(1);
    expect(await reservations(), 'and reserved').to.equal(1);
    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));
    env().sim.knobs.reset(); // the held turn answers (its job's answer is kept for the line's next runner)
    expect(await ledger(), 'nothing charged yet').to.equal(0);
    return mb.id;
  }

  it('the line taken over and answered: one search charged, the counter one (before: two)', async () => {
    const id = await searchedThenKilled();
    worker = await startBatchWorker({ claimStaleMs: 1500 });
    expect(await waitFor(async () => (await anthropic.messages.batches.retrieve(id)).processing_status === 'ended', 60_000, 200)).to.equal(true);
    const results: Array<{ result: { type: string } }> = [];
    for await (const r of await anthropic.messages.batches.results(id)) results.push(r as never);
    expect(results.map((r) => r.result.type)).to.deep.equal(['succeeded']);
    await usageSettled();
    expect(await ledger(), 'one search charged').to.equal(1);
    expect(await counter(), 'the counter holds what the ledger holds').to.equal(1);
    expect(await reservations(), 'no reservation left').to.equal(0);
    expect(await env().redis.keys(keys.searchHeld(o.org.id, '*')), 'no held marker left').to.deep.equal([]);
  });

  it('the batch cancelled before another runner took the line: nothing charged, the counter back to zero (before: one)', async () => {
    const id = await searchedThenKilled();
    await anthropic.messages.batches.cancel(id);
    worker = await startBatchWorker({ claimStaleMs: 1500 });
    expect(await waitFor(async () => (await anthropic.messages.batches.retrieve(id)).processing_status === 'ended', 60_000, 200)).to.equal(true);
    const results: Array<{ result: { type: string } }> = [];
    for await (const r of await anthropic.messages.batches.results(id)) results.push(r as never);
    expect(results.map((r) => r.result.type)).to.deep.equal(['canceled']);
    expect(await ledger(), 'nothing charged').to.equal(0);
    expect(await counter(), 'the dead attempt\'s search given back').to.equal(0);
    expect(await reservations(), 'no reservation left').to.equal(0);
    expect(await env().redis.keys(keys.searchHeld(o.org.id, '*')), 'no held marker left').to.deep.equal([]);
  });
});
