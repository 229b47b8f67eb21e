import { QueryInterface } from 'sequelize';

/**
 * The request log row of a batch line (issue 33) names its batch: `batch_id`, null for every other
 * request (shared/metering/request-log.ts). Adding a nullable column without a default touches no
 * partition's rows.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE request_logs ADD COLUMN batch_id varchar(64)');
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE request_logs DROP COLUMN batch_id');
}
