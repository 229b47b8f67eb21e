import { QueryTypes } from 'sequelize';
import { db } from '../../shared/db/sequelize';
import { usageSource } from '../../shared/metering/usage-source';
import { addDays, dayStart, utcDay } from '../../shared/metering/rollups';

export interface UsageRow {
  day: string;
  model: string;
  modality: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
}

/**
 * An org's usage per UTC day, model and modality over the last `days` days, today included: closed
 * days from the rollups, the rest from the usage ledger (the same source as `GET /admin/v1/usage-stats`).
 */
export async function orgUsage(orgId: string, days = 30): Promise<{ from: string; to: string; rows: UsageRow[] }> {
  const to = addDays(utcDay(new Date()), 1);
  const from = addDays(to, -days);
  const src = await usageSource({ orgId, from: dayStart(from), to: dayStart(to) });
  const rows = await db().query<Record<string, string>>(
    `SELECT day, model, modality, sum(requests) AS requests, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens
       FROM (${src.sql}) AS src GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    { type: QueryTypes.SELECT, replacements: src.replacements },
  );
  return {
    from,
    to,
    rows: rows.map((r) => ({ day: r.day, model: r.model, modality: r.modality, requests: Number(r.requests), inputTokens: Number(r.input_tokens), outputTokens: Number(r.output_tokens) })),
  };
}
