import type { Router } from 'express';
import Joi from 'joi';
import { adminRouter } from '../admin-router';
import { only } from '../../routes/only';
import { validateQuery } from '../../validate';
import { instant } from './stats';
import type { RouteDoc } from '../openapi/route-doc';
import { LOG_COLUMNS, STATUS_FILTER, listRequestLogs, type RequestLogRow } from '../../../shared/metering/request-log-query';
import { isoInstant } from '../../../shared/iso-instant';

export const requestLogsQuery = Joi.object({
  org_id: Joi.string().guid(),
  api_key_id: Joi.string().guid(),
  project_id: Joi.string().guid(),
  model: Joi.string().max(255),
  status: Joi.string().pattern(STATUS_FILTER).description('An exact status (429), a class (2xx, 4xx, 5xx) or `error` (any status >= 400).'),
  from: isoInstant().description('Inclusive, ISO 8601 (a value without a zone is UTC).'),
  to: isoInstant().description('Exclusive, ISO 8601.'),
  limit: Joi.number().integer().min(1).max(500).default(50),
  cursor: Joi.string().max(400).description('`next_cursor` of the previous page.'),
});

/** A request log row as the API shows it. */
export const logObject = (r: RequestLogRow) => ({ object: 'request_log', ...Object.fromEntries(LOG_COLUMNS.map((c) => [c, r[c]])) });

/** `GET /request-logs`: the request log, newest first, filtered, with cursor pagination (the `stats` family). */
export function requestLogsRouter(): Router {
  const r = adminRouter();
  only(r, '/request-logs', {
    get: async (req, res) => {
      const q = validateQuery<{ org_id?: string; api_key_id?: string; project_id?: string; model?: string; status?: string; from?: string; to?: string; limit: number; cursor?: string }>(requestLogsQuery, req.query);
      const page = await listRequestLogs(
        {
          orgId: q.org_id,
          apiKeyId: q.api_key_id,
          projectId: q.project_id,
          model: q.model,
          status: q.status,
          from: instant(q.from && String(req.query.from), 'from'),
          to: instant(q.to && String(req.query.to), 'to'),
        },
        { limit: q.limit, cursor: q.cursor },
      );
      res.json({ object: 'list', data: page.rows.map(logObject), has_more: page.next !== null, next_cursor: page.next });
    },
  });
  return r;
}

export const requestLogsDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/request-logs',
    family: 'stats',
    summary: 'The request log: one row per request (metadata only), newest first, filtered by org, key, project, model, status and time; `next_cursor` pages on.',
    query: requestLogsQuery,
  },
];
