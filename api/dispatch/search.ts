import type { Request } from 'express';
import type { SpanHandle } from '../../shared/tracing/trace';
import type { AppContext } from '../context';
import type { OrgContext } from '../../shared/tenancy/directory';
import type { FetchResult, SearchArgs, SearchOutcome, SearchResult } from '../../shared/search/types';
import { ApiError } from '../../shared/errors/ApiError';
import { errors } from '../../shared/errors/codes';
import { encrypt } from '../../shared/crypto';
import { config } from '../../shared/config/env';
import { logger } from '../../shared/logger';
import { laneLimit } from '../../shared/lanes/policy';
import { mcpToolAllowed } from '../../shared/policies/mcp-tools';
import { searchErrors } from '../../shared/search/errors';
import { memberTerms, orgSearchTerms, resolveProvider } from '../../shared/search/resolve';
import { reserveSearch } from '../../shared/search/entitlements';
import { periodEnd } from '../../shared/search/period';
import { recordSearch } from '../../shared/search/ledger';
import { runQueued } from './run-job';
import { CancelSource, sleep } from '../../shared/cancel-source';
import { searchBudget } from './limits';
import type { KeyControls } from '../../shared/limits/controls';
import { logContext } from '../middleware/request-log';
import type { LogContext } from '../../shared/metering/request-log';
import type { BatchLine } from '../types';

export type { SearchArgs, SearchOutcome } from '../../shared/search/types';

/** Search jobs take a lease on their own pool (never a chat lane). */
export const SEARCH_POOL = 'search';
export const SEARCH_LANE = 'default';
export const SEARCH_LANE_DEFAULT = 16;
export const MAX_QUERY_CHARS = 400;

/**
 * Whether a query is 1-400 characters counted as JSON Schema's `maxLength` counts them (code points,
 * the MCP tool's schema), not UTF-16 units: 400 emoji fit. A string over 800 units cannot, unread.
 */
export function queryLengthFits(query: string): boolean {
  if (query.length < 1 || query.length > 2 * MAX_QUERY_CHARS) return false;
  let n = 0;
  for (const _ of query) if (++n > MAX_QUERY_CHARS) return false;
  return true;
}

/**
 * Who is searching: what the authenticated request knows. Build it with `searchCaller(ctx, req)`.
 */
export interface SearchCaller {
  ctx: AppContext;
  orgId: string;
  org: OrgContext;
  apiKeyId: string | null;
  /** The member (user id) the API key belongs to, if any: member caps, switch and tool policy apply. */
  userId: string | null;
  projectId: string | null;
  /** The key's controls: its and its project's budgets are charged the search's price. */
  controls?: KeyControls | null;
  /** Unique per search: the job id and the ledger row's key. Several searches in one request need distinct ids. */
  requestId: string;
  /** The request's span when tracing is on: the search job joins the request's trace. */
  trace?: SpanHandle;
  /** The request log context its job carries (api/middleware/request-log.ts). */
  log?: LogContext;
  /**
   * A batch line's search (its native search loop): the search's usage event travels with the line's
   * answer and its ledger row and budget charge wait for the line to succeed (HeldSearchCharge), so
   * an attempt that fails and runs again charges nothing (docs/batches.md).
   */
  line?: BatchLine;
}

export function searchCaller(ctx: AppContext, req: Request): SearchCaller {
  const a = req.auth!;
  return { ctx, orgId: a.orgId, org: a.org, apiKeyId: a.keyId, userId: a.userId ?? null, projectId: a.projectId, controls: a.controls ?? null, requestId: req.id, trace: req.trace?.root, log: logContext(req), line: req.batchLine };
}

function checkArgs(args: SearchArgs): void {
  if (args.kind === 'search') {
    if (typeof args.query !== 'string' || !queryLengthFits(args.query)) {
      throw errors.invalidRequest(`'query' must be a string of 1-${MAX_QUERY_CHARS} characters.`);
    }
    if (args.count !== undefined && (typeof args.count !== 'number' || !Number.isInteger(args.count))) {
      throw errors.invalidRequest("'count' must be an integer (it is clamped to the provider's range).");
    }
    if (args.provider !== undefined && (typeof args.provider !== 'string' || args.provider.length === 0)) {
      throw errors.invalidRequest("'provider' must be a provider key.");
    }
  } else if (typeof args.url !== 'string' || !/^https?:\/\//i.test(args.url)) {
    throw errors.invalidRequest("'url' must be an http(s) URL.");
  }
}

/**
 * One gated search (or page fetch), in the spec's order: tool policy (`mcp_tool_disabled`), the
 * `web_search` kill switch (`web_search_disabled`), provider then key resolution
 * (`provider_not_allowed`, `provider_unconfigured`), the member's switch, then the atomic entitlement
 * decision in Redis (`quota_exceeded`, `search_rate_limited`), then the key's and project's budgets
 * at the search's price (402 `budget_exceeded`; docs/keys.md). The search runs on the search pool;
 * on success one ledger row is written, on failure the reservation is given back and nothing is charged.
 */
export async function runSearch(caller: SearchCaller, args: SearchArgs, signal?: AbortSignal): Promise<SearchOutcome> {
  const { ctx, org } = caller;
  const tool = args.kind === 'fetch' ? 'web_fetch' : 'web_search';
  await ctx.directory.sync();
  if (!(await mcpToolAllowed(ctx.directory, org, caller.userId, 'web_search'))) throw searchErrors.toolDisabled('web_search');
  if (tool === 'web_fetch' && !(await mcpToolAllowed(ctx.directory, org, caller.userId, tool))) throw searchErrors.toolDisabled(tool);
  if (ctx.switches.engaged('web_search')) throw searchErrors.webSearchDisabled();
  checkArgs(args);

  const terms = await orgSearchTerms(ctx.directory, org);
  const provider = await resolveProvider(ctx.directory, caller.orgId, terms.settings, args.kind === 'search' ? args.provider : undefined);
  const member = await memberTerms(ctx.directory, caller.orgId, caller.userId);
  if (member && !member.enabled) throw searchErrors.quotaExceeded('Web search is switched off for you in this organization.', periodEnd());
  // a key made for a member who has left the org keeps no search rights of its own
  if (caller.userId && !member) throw searchErrors.quotaExceeded('The user this key belongs to is no longer a member of the organization.', periodEnd());
  const reservation = await reserveSearch(ctx.redis, {
    orgId: caller.orgId,
    requestId: caller.requestId,
    ownKey: provider.keySource === 'own',
    allowance: terms.allowance,
    overageEnabled: terms.overageEnabled,
    monthlyLimit: terms.monthlyLimit,
    member: member ? { userId: member.userId, cap: member.cap } : null,
    perMinute: terms.perMinute,
    held: !!caller.line,
  });
  const unit = args.kind === 'fetch' ? provider.fetchPriceMicros : provider.priceMicros;
  const priceMicros = reservation.chargeClass === 'overage' ? unit : 0;
  const budget = await searchBudget(ctx, caller, caller.requestId, priceMicros).catch(async (err: unknown) => {
    await reservation.release().catch((e) => logger.warn({ err: e }, 'search reservation release failed'));
    throw err;
  });

  let result: SearchResult | FetchResult;
  try {
    const target = { name: provider.name, kind: provider.kind, baseUrl: provider.baseUrl, sealedKey: encrypt(provider.apiKey), keySource: provider.keySource };
    result = (await runQueued(
      ctx,
      { orgId: caller.orgId, projectId: caller.projectId, apiKeyId: caller.apiKeyId, requestId: caller.requestId, trace: caller.trace, log: caller.log && { ...caller.log },
        carried: caller.line ? (caller.line.usage ??= []) : undefined },
      signal,
      {
        queue: 'search',
        pool: SEARCH_POOL,
        lane: SEARCH_LANE,
        limit: laneLimit(org, SEARCH_POOL, SEARCH_LANE, SEARCH_LANE_DEFAULT),
        overLimit: (s) => new ApiError(429, 'search_lanes_exhausted', 'Too many concurrent searches for this organization; retry shortly.', { retryAfter: s }),
        publicModel: `${tool}:${provider.name}`,
        timeoutMs: config().searchTimeoutMs,
        // Omit<> over the job union loses its members: the shape is SearchJob's, checked by the worker's type
        data: (args.kind === 'search'
          ? { kind: 'search', provider: target, query: args.query, count: args.count, country: args.country }
          : { kind: 'fetch', provider: target, url: args.url, allowedDomains: args.allowedDomains, blockedDomains: args.blockedDomains }) as never,
      },
    )) as SearchResult | FetchResult;
  } catch (err) {
    await reservation.release().catch((e) => logger.warn({ err: e }, 'search reservation release failed'));
    await budget.release().catch((e) => logger.warn({ err: e }, 'search budget release failed'));
    // a fetch that got no answer is told at its deadline whatever failed (no port probing: shared/net/ssrf.ts),
    // waited here, where it holds neither the search pool's slot nor the org's search lane
    // (a caller who leaves ends the wait; the fetch's failure is what is thrown either way)
    if (err instanceof ApiError && err.holdMs) await sleep(err.holdMs, signal ?? new CancelSource()).catch(() => undefined);
    throw err;
  }

  const charge = { provider: provider.name, keySource: provider.keySource, chargeClass: reservation.chargeClass, priceMicros };
  const entry = { requestId: caller.requestId, orgId: caller.orgId, userId: member?.userId ?? null, apiKeyId: caller.apiKeyId, projectId: caller.projectId, period: reservation.period, kind: args.kind, ...charge };
  const settle = () => budget.settle(priceMicros).catch((e) => logger.warn({ err: e }, 'search budget settlement failed'));
  if (caller.line) {
    // charged with the line's answer, or given back when the line does not succeed (workers/batch/runner.ts)
    (caller.line.searches ??= []).push({
      entry,
      settle: () => Promise.all([settle(), reservation.settled().catch((e) => logger.warn({ err: e }, 'search marker cleanup failed'))]).then(() => undefined),
      release: () => Promise.all([reservation.release(), budget.release()]).then(() => undefined),
    });
  } else {
    await recordSearch(entry);
    await settle();
  }
  return { kind: args.kind, ...result, charge } as SearchOutcome;
}
