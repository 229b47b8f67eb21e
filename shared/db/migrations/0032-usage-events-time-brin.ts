import { QueryInterface } from 'sequelize';

/**
 * `usage_events`' time index becomes BRIN (was a btree). It serves the reads by time alone (a day's
 * rollup, the usage of every organization over a window), which read ranges of an append-only table
 * in the order it was written: what BRIN is for, at a fraction of the size and of a btree's cost per
 * insert. And the btree competed with `(request_id, created_at)` for the drainer's check of a request
 * id already written (shared/metering/usage.ts, `usageInsertSql`): on a day partition without
 * statistics yet (every new day, every new deployment, until autovacuum's first ANALYZE) the planner
 * chose the smaller btree, a range scan of the whole day with a filter on the id, for each event: the
 * first few thousand events of a day cost in proportion to the events before them (issue 29,
 * docs/benchmark.md, test/integration/usage/drain-plan). A BRIN index is never the cheaper probe.
 * On the partitioned table the index is made on every partition, and on each partition made later.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DROP INDEX IF EXISTS usage_events_created_at');
  await q.sequelize.query('CREATE INDEX usage_events_created_at ON usage_events USING brin (created_at)');
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DROP INDEX IF EXISTS usage_events_created_at');
  await q.sequelize.query('CREATE INDEX usage_events_created_at ON usage_events (created_at)');
}
