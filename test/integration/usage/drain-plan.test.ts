import crypto from 'crypto';
import { expect } from 'chai';
import { usagePool, type UsageRecord } from '../../../shared/metering/usage';
import { usageStatement } from '../../../shared/metering/usage-statement';
import { chatUsage } from '../../helpers/usage';
import { ensureDayPartitions } from '../../../shared/db/partitions';

/** Every node of an EXPLAIN (FORMAT JSON) plan, depth first. */
function nodesOf(plan: Record<string, unknown>): Array<Record<string, unknown>> {
  const children = (plan.Plans as Array<Record<string, unknown>> | undefined) ?? [];
  return [plan, ...children.flatMap(nodesOf)];
}

/**
 * The drainer writes each batch of usage events with their request log rows in one statement
 * (usageStatement). Its check that a request id is not already in usage_events must cost the batch
 * an index probe per event, not a read of the table: a hash anti-join over every partition made the
 * drainer's Postgres CPU per event grow with the table (docs/benchmark.md, issue 29, sixteenth session).
 */
describe('usage drainer statement: the request id check reads an index, not the table', () => {
  const orgId = crypto.randomUUID();
  const tag = `req_plan_${crypto.randomBytes(4).toString('hex')}`;

  before(async function () {
    this.timeout(60_000);
    // 20,000 events of today already in the table, and statistics that know it
    await usagePool().query(
      `INSERT INTO usage_events (id, request_id, org_id, model, modality, lane, input_tokens, output_tokens, created_at)
       SELECT gen_random_uuid(), $1 || '_' || i, $2, 'sim-chat', 'chat', 'interactive', 5, 7, now() - (i || ' ms')::interval
         FROM generate_series(1, 20000) AS i`,
      [tag, orgId],
    );
    await usagePool().query('ANALYZE usage_events');
  });
  after(async () => {
    await usagePool().query('DELETE FROM usage_events WHERE org_id = $1', [orgId]);
    await usagePool().query('DELETE FROM request_logs WHERE org_id = $1', [orgId]);
  });

  const batch = (n: number, prefix: string): UsageRecord[] =>
    Array.from({ length: n }, (_, i) =>
      chatUsage(orgId, `${prefix}_${i}`, {
        log: { receivedAt: Date.now(), route: '/v1/chat/completions', dialect: 'openai-chat', userId: null, traceId: null, batchId: null, status: 200, stream: false, attempts: 1 },
      }),
    );

  /**
   * The plan of the drainer's statement for a batch of 200 new events; `settings`: SET LOCAL before
   * EXPLAIN. With `plan_cache_mode = force_generic_plan`, the plan Postgres keeps for the prepared
   * statement the drainer sends (its name, usageStatement) once it stops planning each batch.
   */
  async function planOf(settings: string[]): Promise<Array<Record<string, unknown>>> {
    const s = usageStatement(batch(200, `${tag}_new`))!;
    const c = await usagePool().connect();
    try {
      await c.query('BEGIN');
      for (const set of settings) await c.query(`SET LOCAL ${set}`);
      let plan;
      if (settings.some((x) => x.includes('generic'))) {
        await c.query(`PREPARE drain_plan_test AS ${s.sql}`);
        plan = await c.query(`EXPLAIN (FORMAT JSON) EXECUTE drain_plan_test(${s.params.map((p) => c.escapeLiteral(p)).join(', ')})`);
      } else {
        plan = await c.query(`EXPLAIN (FORMAT JSON) ${s.sql}`, s.params);
      }
      return nodesOf((plan.rows[0]['QUERY PLAN'] as Array<{ Plan: Record<string, unknown> }>)[0].Plan);
    } finally {
      await c.query('ROLLBACK');
      await c.query('DEALLOCATE ALL');
      c.release();
    }
  }

  it('plans no sequential scan of the partition that holds events and no hash anti-join, and still skips ids already written', async () => {
    // the partition holding the 20,000 events (an empty partition may be scanned: it has nothing to read)
    const held = await usagePool().query('SELECT DISTINCT tableoid::regclass::text AS part FROM usage_events WHERE org_id = $1', [orgId]);
    expect(held.rows).to.have.length(1);
    const busy = held.rows[0].part as string;
    // as planned, as planned by a planner that prefers a join other than a nested loop (as it did on
    // a partition not yet analyzed), and as the generic plan of the prepared statement: the check stays
    // a probe of each partition's index per event
    for (const settings of [[], ['enable_nestloop = off'], ['plan_cache_mode = force_generic_plan']]) {
      const nodes = await planOf(settings);
      const tableScans = nodes.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === busy);
      expect(tableScans.map((n) => n['Relation Name']), `the partition read whole (${settings.join(', ') || 'default settings'})`).to.deep.equal([]);
      const antiJoins = nodes.filter((n) => n['Join Type'] === 'Anti');
      expect(antiJoins.map((n) => n['Node Type']), `anti-joins (${settings.join(', ') || 'default settings'})`).to.deep.equal([]);
      const probes = nodes.filter((n) => n['Relation Name'] === busy);
      expect(probes.map((n) => n['Index Name']), `the busy partition is probed by the id's key (${settings.join(', ') || 'default settings'})`).to.include(`${busy}_request_id_created_at_key`);
    }
    // one prepared statement per text: the drainer's names never meet two texts
    const both = usageStatement(batch(2, `${tag}_names`))!;
    expect(usageStatement(batch(5, `${tag}_names2`))!).to.include({ name: both.name, sql: both.sql });
    const eventsOnly = usageStatement(batch(1, `${tag}_names3`).map(({ log: _log, ...r }) => r))!;
    expect(eventsOnly.name).to.not.equal(both.name);
    expect(eventsOnly.sql).to.not.equal(both.sql);

    // the statement itself: 100 ids already there (written by the first batch) and 100 new ones
    const first = batch(100, `${tag}_dup`);
    await usagePool().query(usageStatement(first)!.sql, usageStatement(first)!.params);
    const again = [...first, ...batch(100, `${tag}_fresh`)];
    const st = usageStatement(again)!;
    await usagePool().query(st.sql, st.params);
    const counted = await usagePool().query(
      `SELECT count(*)::int AS n, count(DISTINCT request_id)::int AS ids FROM usage_events WHERE org_id = $1 AND (request_id LIKE $2 OR request_id LIKE $3)`,
      [orgId, `${tag}_dup_%`, `${tag}_fresh_%`],
    );
    expect(counted.rows[0]).to.deep.equal({ n: 200, ids: 200 });
  });
  it('on a day partition without statistics (a new day, a new deployment), checks each id by its index, not by the time index over the day', async function () {
    this.timeout(60_000);
    // a day of its own, far ahead, its partition made now and never analyzed (autovacuum's first ANALYZE
    // comes a minute or more after a day's first events); 2,000 events already in it
    const day = '2099-01-01';
    const part = 'usage_events_p20990101';
    await ensureDayPartitions('usage_events', day, 1);
    try {
      await usagePool().query(
        `INSERT INTO usage_events (id, request_id, org_id, model, modality, lane, input_tokens, output_tokens, created_at)
         SELECT gen_random_uuid(), $1 || '_new_day_' || i, $2, 'sim-chat', 'chat', 'interactive', 5, 7, $3::timestamptz + (i || ' ms')::interval
           FROM generate_series(1, 2000) AS i`,
        [tag, orgId, `${day}T12:00:00Z`],
      );
      const stats = await usagePool().query('SELECT reltuples FROM pg_class WHERE relname = $1', [part]);
      expect(Number(stats.rows[0].reltuples), 'the partition has no statistics').to.equal(-1);
      const at = Date.parse(`${day}T13:00:00Z`);
      const records = batch(50, `${tag}_new_day_batch`).map((r) => ({ ...r, at }));
      const s = usageStatement(records)!;
      const { rows } = await usagePool().query(`EXPLAIN (FORMAT JSON) ${s.sql}`, s.params);
      const nodes = nodesOf((rows[0]['QUERY PLAN'] as Array<{ Plan: Record<string, unknown> }>)[0].Plan).filter((n) => n['Relation Name'] === part);
      expect(nodes.length, 'the check reads the day\'s partition').to.be.at.least(1);
      // the probe of the id: the (request_id, created_at) key; the time index (BRIN) would read the whole day
      expect(nodes.map((n) => `${n['Node Type']} ${n['Index Name'] ?? ''}`.trim())).to.deep.equal([`Index Only Scan ${part}_request_id_created_at_key`]);
      const time = await usagePool().query(`SELECT indexdef FROM pg_indexes WHERE tablename = $1 AND indexname = $2`, [part, `${part}_created_at_idx`]);
      expect(time.rows[0]?.indexdef, 'the time index is BRIN').to.match(/USING brin \(created_at\)/);
    } finally {
      await usagePool().query(`DROP TABLE IF EXISTS ${part}`);
    }
  });
});
