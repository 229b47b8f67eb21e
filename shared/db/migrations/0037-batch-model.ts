import { QueryInterface } from 'sequelize';

/**
 * OpenAI's `Batch.model` (the model the batch's lines name, set when they are read; docs/batches.md),
 * and the bound on a failed batch's `errors.data`: rows written before it listed every bad line of
 * the input file (up to BATCH_MAX_LINES entries in one row and in every answer showing it). They keep
 * the first 100 and one `too_many_errors` entry with the count, as shared/batches/input.ts writes
 * them now. Both statements can run again.
 */
export const TRIM_BATCH_ERRORS = `
  UPDATE batches SET errors = jsonb_build_object('object', 'list', 'data',
      (SELECT jsonb_agg(e ORDER BY i) FROM jsonb_array_elements(errors->'data') WITH ORDINALITY AS t(e, i) WHERE i <= 100)
      || jsonb_build_array(jsonb_build_object('code', 'too_many_errors',
           'message', format('%s lines of the input file are invalid; the first 100 are listed.', jsonb_array_length(errors->'data')),
           'line', NULL, 'param', NULL)))
   WHERE jsonb_typeof(errors->'data') = 'array' AND jsonb_array_length(errors->'data') > 100
     AND errors->'data'->-1->>'code' IS DISTINCT FROM 'too_many_errors'`;

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE batches ADD COLUMN IF NOT EXISTS model varchar(255)');
  await q.sequelize.query(TRIM_BATCH_ERRORS);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE batches DROP COLUMN model');
}
