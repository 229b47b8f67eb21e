import type { Router } from 'express';
import { adminRouter } from '../admin-router';
import Joi from 'joi';
import { QueryTypes } from 'sequelize';
import { only } from '../../routes/only';
import { validateQuery } from '../../validate';
import { ApiError } from '../../../shared/errors/ApiError';
import { db } from '../../../shared/db/sequelize';
import type { RouteDoc } from '../openapi/route-doc';
import { usageSource } from '../../../shared/metering/usage-source';
import { isoInstant, storableInstant } from '../../../shared/iso-instant';

const GROUPS = { org: 'org_id', model: 'model', day: 'day', modality: 'modality' } as const;

export const usageQuery = Joi.object({
  group_by: Joi.string().pattern(/^(org|model|day|modality)(,(org|model|day|modality))*$/).default('org'),
  org_id: Joi.string().guid(),
  model: Joi.string().max(200),
  modality: Joi.string().max(32),
  from: isoInstant(),
  to: isoInstant(),
  limit: Joi.number().integer().min(1).max(1000).default(100),
});

const statsQuery = Joi.object({ days: Joi.number().integer().min(1).max(366).default(30) });

const num = (v: unknown) => Number(v ?? 0);

/** An ISO date or date-time as an instant; a value without a zone is UTC. */
export function instant(v: string | undefined, name: string): Date | undefined {
  if (v === undefined) return undefined;
  const t = new Date(/T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(v) ? `${v}Z` : v);
  // a day that does not exist (2026-02-31) is refused, not rolled over by Date into March (any offset
  // is accepted here, so not shared/utc-instant.ts, whose check would also take 0000-02-29, refused here)
  const d = /^(\d{4})-(\d{2})-(\d{2})/.exec(v);
  const day = d && new Date(Date.UTC(+d[1], +d[2] - 1, +d[3]));
  if (Number.isNaN(t.getTime()) || !storableInstant(t) || (day && (day.getUTCMonth() !== +d![2] - 1 || day.getUTCDate() !== +d![3]))) {
    throw new ApiError(400, 'invalid_request', `'${name}' must be a valid ISO 8601 date`);
  }
  return t;
}

/** `GET /stats` (platform totals) and `GET /usage-stats` (usage events aggregated by org, model, day, modality). */
export function statsRouter(): Router {
  const r = adminRouter();
  only(r, '/stats', {
    get: async (req, res) => {
      const { days } = validateQuery<{ days: number }>(statsQuery, req.query);
      const src = await usageSource({ from: new Date(Date.now() - days * 86_400_000) });
      const [row] = await db().query<Record<string, unknown>>(
        `SELECT (SELECT count(*) FROM organizations) AS organizations,
                (SELECT count(*) FROM users WHERE deleted_at IS NULL) AS users,
                (SELECT count(*) FROM models WHERE enabled) AS models,
                (SELECT count(*) FROM platform_keys WHERE revoked_at IS NULL) AS active_platform_keys,
                coalesce(sum(u.requests), 0) AS requests, coalesce(sum(u.input_tokens), 0) AS input_tokens,
                coalesce(sum(u.output_tokens), 0) AS output_tokens,
                count(DISTINCT u.org_id) AS active_organizations
           FROM (${src.sql}) AS u`,
        { type: QueryTypes.SELECT, replacements: src.replacements },
      );
      res.json({
        object: 'stats',
        window_days: days,
        organizations: num(row.organizations),
        users: num(row.users),
        models: num(row.models),
        active_platform_keys: num(row.active_platform_keys),
        usage: { requests: num(row.requests), input_tokens: num(row.input_tokens), output_tokens: num(row.output_tokens), active_organizations: num(row.active_organizations) },
      });
    },
  });
  only(r, '/usage-stats', {
    get: async (req, res) => {
      const q = validateQuery<{ group_by: string; org_id?: string; model?: string; modality?: string; from?: string; to?: string; limit: number }>(usageQuery, req.query);
      const groups = [...new Set(q.group_by.split(','))] as Array<keyof typeof GROUPS>;
      // Joi's conversion reads a zoneless date-time in the process's zone: parse the raw value as UTC
      const from = instant(q.from && String(req.query.from), 'from');
      const to = instant(q.to && String(req.query.to), 'to');
      const src = await usageSource({ orgId: q.org_id, model: q.model, modality: q.modality, from, to });
      const cols = groups.map((g) => `${GROUPS[g]} AS ${g}`).join(', ');
      const rows = await db().query<Record<string, unknown>>(
        `SELECT ${cols}, sum(requests) AS requests, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
                sum(audio_duration_ms) AS audio_duration_ms,
                coalesce(sum(requests) FILTER (WHERE passthrough), 0) AS passthrough_requests
           FROM (${src.sql}) AS src
          GROUP BY ${groups.map((_, i) => i + 1).join(', ')}
          ORDER BY ${groups.map((_, i) => i + 1).join(', ')} LIMIT :limit`,
        { type: QueryTypes.SELECT, replacements: { ...src.replacements, limit: q.limit } },
      );
      res.json({
        object: 'list',
        group_by: groups,
        data: rows.map((row) => ({
          ...Object.fromEntries(groups.map((g) => [g === 'org' ? 'org_id' : g, row[g]])),
          requests: num(row.requests),
          input_tokens: num(row.input_tokens),
          output_tokens: num(row.output_tokens),
          audio_duration_ms: num(row.audio_duration_ms),
          passthrough_requests: num(row.passthrough_requests),
        })),
      });
    },
  });
  return r;
}

export const statsDocs: RouteDoc[] = [
  { method: 'get', path: '/stats', family: 'stats', summary: 'Platform totals and usage over the last `days` days.', query: statsQuery },
  { method: 'get', path: '/usage-stats', family: 'stats', summary: 'Usage aggregated by org, model, UTC day and/or modality (closed days from the daily rollups, the rest from usage events).', query: usageQuery },
];
