import { QueryTypes } from 'sequelize';
import { db } from '../db/sequelize';

/**
 * What a key, a project or a member (`id` their user: all their keys in `orgId`) spent since `from` (null: ever), in micro-dollars, from the usage ledger:
 * tokens and audio seconds at the model's prices (a `-background` id at its base's), images at the
 * price recorded on their event (the same arithmetic as settlement, shared/limits/usage-cost.ts), plus
 * the web searches charged on the search ledger (overage at its price; allowance and own-key searches
 * are free). A passthrough request (the caller's own provider key paid) costs nothing.
 */
export async function ledgerSpend(scope: 'key' | 'project' | 'member', id: string, from: Date | null, orgId?: string): Promise<number> {
  const column = scope === 'project' ? 'project_id' : 'api_key_id';
  const match = scope === 'member' ? 'IN (SELECT k.id FROM api_keys k WHERE k.org_id = :org AND k.user_id = :id)' : '= :id';
  const [row] = await db().query<{ micros: string | null }>(
    `SELECT sum(e.input_tokens * coalesce((m.prices->>'input_token')::numeric, 0)
              + e.output_tokens * coalesce((m.prices->>'output_token')::numeric, 0)
              + coalesce((e.units->>'audio_duration_ms')::numeric, 0) / 1000 * coalesce((m.prices->>'audio_second')::numeric, 0)
              + coalesce((e.units->>'cost_micros')::numeric, 0)) AS micros
       FROM usage_events e LEFT JOIN models m ON m.public_id = regexp_replace(e.model, '-background$', '')
      WHERE e.${column} ${match} AND NOT e.passthrough ${from ? 'AND e.created_at >= :from' : ''}`,
    { type: QueryTypes.SELECT, replacements: { id, org: orgId ?? null, from: from?.toISOString() } },
  );
  const [searches] = await db().query<{ micros: string | null }>(
    `SELECT sum(price_micros) AS micros FROM search_usage WHERE ${column} ${match} ${from ? 'AND created_at >= :from' : ''}`,
    { type: QueryTypes.SELECT, replacements: { id, org: orgId ?? null, from: from?.toISOString() } },
  );
  return Number(row?.micros ?? 0) + Number(searches?.micros ?? 0);
}
