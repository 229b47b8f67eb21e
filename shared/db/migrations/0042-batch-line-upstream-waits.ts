import { QueryInterface } from 'sequelize';

/**
 * A batch line the upstream provider rate-limited (429 `upstream_rate_limited` after the gateway's
 * own retries) runs again as a new attempt, paced, within the batch's window (workers/batch/runner.ts).
 * `upstream_waits` counts those attempts apart from the crash retries (`attempt` counts both, as it
 * names the request id), so they never use up the 3 attempts a line has for a lost worker.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE batch_lines ADD COLUMN upstream_waits integer NOT NULL DEFAULT 0');
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE batch_lines DROP COLUMN upstream_waits');
}
