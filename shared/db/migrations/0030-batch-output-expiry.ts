import { QueryInterface } from 'sequelize';

/**
 * A batch's `output_expires_after` (OpenAI Batch API): the seconds after their creation that its
 * output and error files expire, instead of BATCH_FILE_RETENTION_DAYS (docs/batches.md). The anchor
 * is always `created_at`, so only the seconds are kept; null for a batch without a policy.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`
    ALTER TABLE batches ADD COLUMN output_expires_after_seconds integer
      CHECK (output_expires_after_seconds BETWEEN 3600 AND 2592000)
  `);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE batches DROP COLUMN output_expires_after_seconds');
}
