import { addDays, closedDays, dayStart, utcDay } from './rollups';

export interface UsageFilter {
  orgId?: string;
  model?: string;
  modality?: string;
  /** inclusive */
  from?: Date;
  /** exclusive */
  to?: Date;
}

/** Columns of every row of the source: one per rollup row of a closed day, one per event otherwise. */
const COLUMNS = 'day, org_id, model, modality, passthrough, requests, input_tokens, output_tokens, audio_duration_ms, cost_micros';

/**
 * The usage rows in a window, as a SQL subquery (`FROM (<sql>) AS src`): closed days that lie wholly
 * inside the window come from `usage_rollups`, everything else (today, days not rolled up, the partial
 * days at the window's ends) from `usage_events`. Aggregating the subquery gives the same answer as
 * aggregating the events alone.
 */
export async function usageSource(f: UsageFilter): Promise<{ sql: string; replacements: Record<string, unknown> }> {
  const firstWholeDay = f.from ? (dayStart(utcDay(f.from)).getTime() === f.from.getTime() ? utcDay(f.from) : addDays(utcDay(f.from), 1)) : null;
  const endWholeDay = f.to ? utcDay(f.to) : null;
  const closed = firstWholeDay && endWholeDay && firstWholeDay >= endWholeDay ? [] : await closedDays(firstWholeDay, endWholeDay);
  const replacements: Record<string, unknown> = { org_id: f.orgId, model: f.model, modality: f.modality, from: f.from?.toISOString(), to: f.to?.toISOString(), closed };
  const filters: string[] = [];
  if (f.orgId) filters.push('org_id = :org_id');
  if (f.model) filters.push('model = :model');
  if (f.modality) filters.push('modality = :modality');

  const events = [...filters];
  if (f.from) events.push('created_at >= :from');
  if (f.to) events.push('created_at < :to');
  // the events outside runs of consecutive closed days, as ranges the created_at index can serve
  const gaps: string[] = [];
  let lower: string | null = null;
  for (let i = 0; i < closed.length; i++) {
    if (i > 0 && closed[i] === addDays(closed[i - 1], 1)) continue;
    replacements[`g${i}`] = dayStart(closed[i]).toISOString();
    gaps.push(lower ? `(created_at >= :${lower} AND created_at < :g${i})` : `created_at < :g${i}`);
    let j = i;
    while (j + 1 < closed.length && closed[j + 1] === addDays(closed[j], 1)) j++;
    lower = `e${i}`;
    replacements[lower] = dayStart(addDays(closed[j], 1)).toISOString();
  }
  if (lower) events.push(`(${[...gaps, `created_at >= :${lower}`].join(' OR ')})`);

  const fromEvents = `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, org_id, model, modality, passthrough, 1 AS requests,
         input_tokens, output_tokens, coalesce((units->>'audio_duration_ms')::bigint, 0) AS audio_duration_ms,
         coalesce((units->>'cost_micros')::numeric, 0) AS cost_micros
    FROM usage_events ${events.length ? `WHERE ${events.join(' AND ')}` : ''}`;
  if (!closed.length) return { sql: fromEvents, replacements };
  const fromRollups = `SELECT to_char(day, 'YYYY-MM-DD') AS day, org_id, model, modality, passthrough, requests,
         input_tokens, output_tokens, coalesce((units->>'audio_duration_ms')::numeric, 0) AS audio_duration_ms,
         coalesce((units->>'cost_micros')::numeric, 0) AS cost_micros
    FROM usage_rollups WHERE ${['day IN (:closed)', ...filters].join(' AND ')}`;
  return { sql: `SELECT ${COLUMNS} FROM (${fromRollups}) AS rolled UNION ALL ${fromEvents}`, replacements };
}
