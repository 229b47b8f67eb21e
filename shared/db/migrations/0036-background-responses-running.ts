import { QueryInterface } from 'sequelize';

/**
 * A partial index of the background responses still running, for the clock's sweep of lapsed leases
 * every minute (shared/responses/retention.ts: failAbandonedBackground): it reads these few rows,
 * not the table, and a response leaves the index when it ends.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(
    `CREATE INDEX IF NOT EXISTS stored_responses_background_running ON stored_responses (created_at)
      WHERE response->>'background' = 'true' AND response->>'status' IN ('queued', 'in_progress')`,
  );
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DROP INDEX IF EXISTS stored_responses_background_running');
}
