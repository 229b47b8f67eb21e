import { QueryTypes } from 'sequelize';
import { db } from '../db/sequelize';
import { ApiKey, Project } from '../db/models';
import { dayStart } from '../metering/rollups';
import { listPrices, PRICED_SUMS, pricedCost } from './usage-figures';

export interface BreakdownRow {
  /** the key's or project's id; null for traffic without one (e.g. no project) */
  id: string | null;
  /** the key's name and prefix, or the project's name; "(none)" for null */
  label: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  /** priced as in `orgUsageFigures` (list prices, recorded image prices, search overage) */
  costMicros: number;
}

const COLUMN = { key: 'api_key_id', project: 'project_id' } as const;

/**
 * An org's usage over the UTC days [from, to) per API key or per project, from the usage ledger (the
 * rollups keep neither) and the search usage ledger, priced like `orgUsageFigures`: the rows of one
 * breakdown add up to its totals.
 */
export async function usageBreakdown(orgId: string, from: string, to: string, by: 'key' | 'project'): Promise<BreakdownRow[]> {
  const col = COLUMN[by];
  const replacements = { orgId, from: dayStart(from).toISOString(), to: dayStart(to).toISOString() };
  const rows = await db().query<Record<string, string | null>>(
    `SELECT id, model, count(*) AS requests, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, ${PRICED_SUMS}
       FROM (SELECT ${col} AS id, model, input_tokens, output_tokens, passthrough, coalesce((units->>'audio_duration_ms')::numeric, 0) AS audio_duration_ms,
                    coalesce((units->>'cost_micros')::numeric, 0) AS cost_micros
               FROM usage_events WHERE org_id = :orgId AND created_at >= :from AND created_at < :to) AS e GROUP BY 1, 2`,
    { type: QueryTypes.SELECT, replacements },
  );
  const searches = await db().query<{ id: string | null; micros: string }>(
    `SELECT ${col} AS id, sum(price_micros) AS micros FROM search_usage
      WHERE org_id = :orgId AND charge_class = 'overage' AND created_at >= :from AND created_at < :to GROUP BY 1`,
    { type: QueryTypes.SELECT, replacements },
  );
  const price = await listPrices(rows.map((r) => String(r.model)));
  const out = new Map<string | null, Omit<BreakdownRow, 'label'>>();
  const row = (id: string | null) => out.get(id) ?? out.set(id, { id, requests: 0, inputTokens: 0, outputTokens: 0, costMicros: 0 }).get(id)!;
  for (const r of rows) {
    const t = row(r.id);
    t.requests += Number(r.requests); t.inputTokens += Number(r.input_tokens); t.outputTokens += Number(r.output_tokens);
    t.costMicros += pricedCost(r, price);
  }
  for (const s of searches) row(s.id).costMicros += Number(s.micros);
  const labels = await labelsOf(by, [...out.keys()].filter((id): id is string => id !== null));
  return [...out.values()]
    .map((t) => ({ ...t, label: t.id === null ? '(none)' : labels.get(t.id) ?? t.id }))
    .sort((a, b) => b.costMicros - a.costMicros || b.requests - a.requests || a.label.localeCompare(b.label));
}

async function labelsOf(by: 'key' | 'project', ids: string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  if (by === 'project') return new Map((await Project.findAll({ where: { id: ids } })).map((p) => [p.id, p.name]));
  return new Map((await ApiKey.findAll({ where: { id: ids } })).map((k) => [k.id, `${k.name ?? 'unnamed'} (${k.prefix}…)`]));
}
