import { QueryInterface } from 'sequelize';

/**
 * A BRIN index on `stored_responses.created_at` for the clock's retention sweep
 * (shared/responses/retention.ts), which reads the oldest rows by time alone: rows are inserted in
 * time order, so BRIN serves it at a fraction of a btree's size and insert cost.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query('CREATE INDEX IF NOT EXISTS stored_responses_created_at ON stored_responses USING brin (created_at)');
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DROP INDEX IF EXISTS stored_responses_created_at');
}
