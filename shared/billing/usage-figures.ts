import { QueryTypes } from 'sequelize';
import { db } from '../db/sequelize';
import { Model } from '../db/models';
import { backgroundBase } from '../catalog/catalog';
import { usageSource } from '../metering/usage-source';
import { addDays, dayStart, utcDay } from '../metering/rollups';

export interface UsageRow {
  day: string;
  model: string;
  modality: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  audioSeconds: number;
  /**
   * Micro-dollars: tokens and audio seconds at the model's list prices, images at the price recorded
   * on their usage event (`units.cost_micros`), web searches at the overage charged in the search
   * usage ledger (allowance and own-key searches are free).
   */
  costMicros: number;
}

export interface UsageFigures {
  org_id: string;
  from: string;
  to: string;
  rows: UsageRow[];
  totals: { requests: number; input_tokens: number; output_tokens: number; audio_seconds: number; cost_micros: number };
}

/**
 * The one source of an org's usage figures, per UTC day, model and modality, over `days` days ending
 * with today: closed days from the rollups, the rest from the usage ledger (`usageSource`), and web
 * search charges from the search usage ledger. The dashboard and `GET /admin/v1/billing/usage` both
 * show exactly this.
 */
export async function orgUsageFigures(orgId: string, days = 30): Promise<UsageFigures> {
  const to = addDays(utcDay(new Date()), 1);
  return orgUsageBetween(orgId, addDays(to, -days), to);
}

/** The same figures over the UTC days [from, to) (`YYYY-MM-DD`), the dashboard's chosen range. */
export async function orgUsageBetween(orgId: string, from: string, to: string): Promise<UsageFigures> {
  const src = await usageSource({ orgId, from: dayStart(from), to: dayStart(to) });
  const rows = await db().query<Record<string, string>>(
    `SELECT day, model, modality, sum(requests) AS requests, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
            sum(audio_duration_ms) AS audio_duration_ms, ${PRICED_SUMS}
       FROM (${src.sql}) AS src GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    { type: QueryTypes.SELECT, replacements: src.replacements },
  );
  const searches = await db().query<{ day: string; micros: string }>(
    `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, coalesce(sum(price_micros), 0) AS micros
       FROM search_usage WHERE org_id = :orgId AND charge_class = 'overage' AND created_at >= :from AND created_at < :to GROUP BY 1`,
    { type: QueryTypes.SELECT, replacements: { orgId, from: dayStart(from).toISOString(), to: dayStart(to).toISOString() } },
  );
  const price = await listPrices(rows.map((r) => r.model));
  const out: UsageRow[] = rows.map((r) => {
    const [inputTokens, outputTokens, audioSeconds] = [Number(r.input_tokens), Number(r.output_tokens), Number(r.audio_duration_ms) / 1000];
    return { day: r.day, model: r.model, modality: r.modality, requests: Number(r.requests), inputTokens, outputTokens, audioSeconds, costMicros: pricedCost(r, price) };
  });
  // a day's search overage goes on that day's web search row (one is written per search), else on a row of its own
  for (const s of searches) {
    const row = out.find((r) => r.day === s.day && r.modality === 'web_search');
    if (row) row.costMicros += Number(s.micros);
    else out.push({ day: s.day, model: 'web_search', modality: 'web_search', requests: 0, inputTokens: 0, outputTokens: 0, audioSeconds: 0, costMicros: Number(s.micros) });
  }
  out.sort((a, b) => a.day.localeCompare(b.day) || a.model.localeCompare(b.model) || a.modality.localeCompare(b.modality));
  return { org_id: orgId, from, to, rows: out, totals: usageTotals(out) };
}

/**
 * The sums a row is priced on, over the events that are not passthrough (the caller's own provider
 * key paid the upstream: metered and shown, never priced; docs/api.md). Columns of `usageSource`.
 */
export const PRICED_SUMS = `coalesce(sum(input_tokens) FILTER (WHERE NOT passthrough), 0) AS priced_input,
            coalesce(sum(output_tokens) FILTER (WHERE NOT passthrough), 0) AS priced_output,
            coalesce(sum(audio_duration_ms) FILTER (WHERE NOT passthrough), 0) AS priced_audio_ms,
            coalesce(sum(cost_micros) FILTER (WHERE NOT passthrough), 0) AS priced_cost_micros`;

/** A row's cost from its PRICED_SUMS: tokens and audio seconds at the model's list prices plus the recorded `cost_micros`. */
export function pricedCost(r: Record<string, unknown>, price: (model: string, unit: string) => number): number {
  const model = String(r.model);
  return Number(r.priced_input) * price(model, 'input_token') + Number(r.priced_output) * price(model, 'output_token')
    + (Number(r.priced_audio_ms) / 1000) * price(model, 'audio_second') + Number(r.priced_cost_micros);
}

/** The catalog model an event's model is priced as: a `-background` id at its base's prices, as the ledger prices it (shared/limits/ledger-spend.ts). */
const pricedAs = backgroundBase;

/** The list price of each unit of the given models, in micro-dollars (0 when the model has no such price). */
export async function listPrices(publicIds: string[]): Promise<(model: string, unit: string) => number> {
  const models = await Model.findAll({ where: { publicId: [...new Set(publicIds.map(pricedAs))] } });
  const prices = new Map(models.map((m) => [m.publicId, m.prices ?? {}]));
  return (model, unit) => {
    const p = prices.get(pricedAs(model))?.[unit];
    return typeof p === 'number' ? p : 0;
  };
}

/** The totals of some usage rows (a window's, or a part of it). */
export function usageTotals(rows: UsageRow[]): UsageFigures['totals'] {
  const totals = { requests: 0, input_tokens: 0, output_tokens: 0, audio_seconds: 0, cost_micros: 0 };
  for (const r of rows) {
    totals.requests += r.requests; totals.input_tokens += r.inputTokens; totals.output_tokens += r.outputTokens;
    totals.audio_seconds += r.audioSeconds; totals.cost_micros += r.costMicros;
  }
  return totals;
}
