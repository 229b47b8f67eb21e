import { QueryTypes } from 'sequelize';
import { db } from '../db/sequelize';

/** OpenAI's BatchUsage: token totals of a batch's answered lines. */
export interface BatchUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

const ZERO = (): BatchUsage => ({ input_tokens: 0, input_tokens_details: { cached_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 });

/**
 * Sums the `usage` of every succeeded line's body, whichever endpoint answered it: chat and
 * completions (`prompt_tokens`, `completion_tokens`, `prompt_tokens_details.cached_tokens`,
 * `completion_tokens_details.reasoning_tokens`), embeddings (`prompt_tokens` only) and responses
 * (`input_tokens`, `output_tokens`, `input_tokens_details`, `output_tokens_details`). Refused lines
 * are not counted, as they are not billed.
 */
export async function lineUsage(ids: string[]): Promise<Map<string, BatchUsage>> {
  const out = new Map<string, BatchUsage>();
  for (const id of ids) out.set(id, ZERO());
  if (!ids.length) return out;
  const rows = await db().query<{ batch_id: string; input: string; cached: string; output: string; reasoning: string }>(
    `SELECT batch_id,
       sum(COALESCE((u->>'prompt_tokens')::bigint, (u->>'input_tokens')::bigint, 0)) AS input,
       sum(COALESCE((u#>>'{prompt_tokens_details,cached_tokens}')::bigint, (u#>>'{input_tokens_details,cached_tokens}')::bigint, 0)) AS cached,
       sum(COALESCE((u->>'completion_tokens')::bigint, (u->>'output_tokens')::bigint, 0)) AS output,
       sum(COALESCE((u#>>'{completion_tokens_details,reasoning_tokens}')::bigint, (u#>>'{output_tokens_details,reasoning_tokens}')::bigint, 0)) AS reasoning
     FROM (SELECT batch_id, result->'usage' AS u FROM batch_lines
           WHERE batch_id IN (:ids) AND state = 'succeeded' AND jsonb_typeof(result->'usage') = 'object') AS s
     GROUP BY batch_id`,
    { type: QueryTypes.SELECT, replacements: { ids } },
  );
  for (const r of rows) {
    const input = Number(r.input);
    const output = Number(r.output);
    out.set(r.batch_id, { input_tokens: input, input_tokens_details: { cached_tokens: Number(r.cached) }, output_tokens: output, output_tokens_details: { reasoning_tokens: Number(r.reasoning) }, total_tokens: input + output });
  }
  return out;
}
