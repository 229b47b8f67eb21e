import { QueryTypes } from 'sequelize';
import { db } from '../../shared/db/sequelize';
import { Model } from '../../shared/db/models';
import { usageSource } from '../../shared/metering/usage-source';
import { addDays, dayStart, utcDay } from '../../shared/metering/rollups';

export interface UsageRow {
  day: string;
  model: string;
  modality: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  audioSeconds: number;
  /** At the model's list prices (input_token, output_token, audio_second; micro-dollars); other units are not priced here. */
  costMicros: number;
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
    `SELECT day, model, modality, sum(requests) AS requests, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
            sum(audio_duration_ms) AS audio_duration_ms
       FROM (${src.sql}) AS src GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    { type: QueryTypes.SELECT, replacements: src.replacements },
  );
  const models = await Model.findAll({ where: { publicId: [...new Set(rows.map((r) => r.model))] } });
  const prices = new Map(models.map((m) => [m.publicId, m.prices ?? {}]));
  const price = (model: string, unit: string) => (typeof prices.get(model)?.[unit] === 'number' ? prices.get(model)![unit] : 0);
  return {
    from,
    to,
    rows: rows.map((r) => {
      const [inputTokens, outputTokens, audioSeconds] = [Number(r.input_tokens), Number(r.output_tokens), Number(r.audio_duration_ms) / 1000];
      const costMicros = inputTokens * price(r.model, 'input_token') + outputTokens * price(r.model, 'output_token') + audioSeconds * price(r.model, 'audio_second');
      return { day: r.day, model: r.model, modality: r.modality, requests: Number(r.requests), inputTokens, outputTokens, audioSeconds, costMicros };
    }),
  };
}
