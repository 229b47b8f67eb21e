import type { Request } from 'express';
import type { AppContext } from '../context';
import type { OrgContext } from '../../shared/tenancy/directory';
import type { SearchArgs, SearchOutcome } from '../../shared/search/types';
import { ApiError } from '../../shared/errors/ApiError';

export type { SearchArgs, SearchOutcome } from '../../shared/search/types';

/**
 * Who is searching: what the authenticated request knows. Build it with `searchCaller(ctx, req)`.
 * `tool` is the MCP tool name the policy check uses (`web_search`; native fetch uses `web_fetch`).
 */
export interface SearchCaller {
  ctx: AppContext;
  orgId: string;
  org: OrgContext;
  apiKeyId: string | null;
  /** The member (user id) the API key belongs to, if any: member caps, switch and tool policy apply. */
  userId: string | null;
  projectId: string | null;
  requestId: string;
}

export function searchCaller(ctx: AppContext, req: Request): SearchCaller {
  const a = req.auth!;
  return { ctx, orgId: a.orgId, org: a.org, apiKeyId: a.keyId, userId: a.userId ?? null, projectId: a.projectId, requestId: req.id };
}

/**
 * One gated search (or page fetch): policy, kill switch, provider and key resolution, the atomic
 * entitlement decision in Redis, the search pool job, and the ledger row. Errors are ApiErrors with
 * the spec's codes (quota_exceeded, provider_not_allowed, provider_unconfigured, mcp_tool_disabled,
 * web_search_disabled, ...); nothing is charged for a search that fails.
 */
export async function runSearch(caller: SearchCaller, args: SearchArgs, signal?: AbortSignal): Promise<SearchOutcome> {
  void caller;
  void args;
  void signal;
  throw new ApiError(501, 'not_implemented', 'Web search is being built.');
}
