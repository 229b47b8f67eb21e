import type { Worker } from 'bullmq';
import { createWorker, type JobContext } from '../../shared/queues/create-worker';
import { config } from '../../shared/config/env';
import { decrypt } from '../../shared/crypto';
import { ApiError } from '../../shared/errors/ApiError';
import { searchAdapter, clampCount } from '../providers/search';
import type { WorkerRuntime } from '../runtime';
import type { SearchJob } from '../../shared/queues/payloads';
import type { FetchResult, SearchResult } from '../../shared/search/types';
import { fetchPage } from '../providers/fetch/page';
import { fetchTrust } from '../../shared/net/fetch-trust';
import { realSignal } from '../../shared/cancel-source';

/** One search (or fetch) job: the provider call, and the usage event of the request. */
async function run(d: SearchJob, { signal, usage }: JobContext): Promise<SearchResult | FetchResult> {
  if (d.kind === 'fetch') {
    // a fetch that got no answer is told at its deadline by the pod (api/dispatch/search.ts), not here: the wait holds no slot
    const page = await fetchPage(d.url, { ...fetchTrust(), allowedDomains: d.allowedDomains, blockedDomains: d.blockedDomains, timeoutMs: config().webFetchTimeoutMs, deferDeadline: true }, realSignal(signal));
    usage('web_search', { units: { web_fetch_requests: 1 }, passthrough: d.provider.keySource === 'own' });
    return { url: page.url, provider: d.provider.name, title: page.title, content: page.content, contentType: page.contentType, retrievedAt: page.retrievedAt };
  }
  const adapter = searchAdapter(d.provider.kind);
  if (!adapter) throw new ApiError(409, 'provider_unconfigured', `The search provider '${d.provider.name}' has no adapter for kind '${d.provider.kind}'.`);
  const results = await adapter.search({
    baseUrl: d.provider.baseUrl,
    apiKey: decrypt(d.provider.sealedKey),
    keySource: d.provider.keySource,
    query: d.query,
    count: clampCount(d.count, adapter.count),
    country: d.country,
    signal,
    deadline: d.deadline,
  });
  usage('web_search', { units: { web_search_requests: 1 }, passthrough: d.provider.keySource === 'own' });
  return { query: d.query, provider: d.provider.name, results };
}

/**
 * The search pool: web search jobs from the `search` queue, with a concurrency of its own. The
 * entitlement decision and the ledger row are the edge's (api/dispatch/search.ts); a failed provider
 * call answers an error and the edge gives the reservation back.
 */
export function startSearchWorkers(rt: WorkerRuntime): Worker[] {
  return [createWorker(rt, 'search', config().searchConcurrency, (job, ctx) => run(job.data, ctx))];
}
