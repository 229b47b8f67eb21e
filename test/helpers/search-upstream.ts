import http from 'http';
import { SearchProvider, SearchSetting } from '../../shared/db/models';
import { encrypt } from '../../shared/crypto';
import { bumpEpoch } from '../../shared/cache/epoch';
import { env } from './harness';

/** A search provider upstream speaking Brave's web search API, with deterministic results. */
export interface SearchUpstream {
  url: string;
  queries: string[];
  close(): Promise<void>;
}

/**
 * `slowMs(query)`: how long to hold the answer to a query (default none). `resultHosts`: the host of
 * each result's URL, as the upstream writes it (one result per entry; default two on docs.example.org).
 */
export async function startSearchUpstream(slowMs: (query: string) => number = () => 0, resultHosts = ['docs.example.org', 'docs.example.org']): Promise<SearchUpstream> {
  const queries: string[] = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url!, 'http://x');
    const q = u.searchParams.get('q') ?? '';
    queries.push(q);
    const slug = q.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
    const results = resultHosts.map((host, n) => ({
      title: `Result ${n + 1} about ${q}`,
      url: `https://${host}/${slug}/${n + 1}`,
      description: `Snippet ${n + 1}: <strong>${q}</strong> explained in detail.`,
      page_age: `2026-10-0${n + 1}T00:00:00Z`,
    }));
    const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ web: { results } }));
    const wait = slowMs(q);
    if (wait) setTimeout(answer, wait).unref();
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    queries,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A provider row for the upstream, the org's default, with a free allowance (overage off unless said). */
export async function useSearchProvider(orgId: string, upstream: SearchUpstream, name: string, settings: Partial<{ monthlyAllowance: number; overageEnabled: boolean; overageMonthlyLimit: number }> = {}): Promise<void> {
  await SearchProvider.findOrCreate({ where: { name }, defaults: { name, kind: 'brave', baseUrl: upstream.url, apiKeyEncrypted: encrypt('sim-search-key'), enabled: true } });
  await SearchProvider.update({ baseUrl: upstream.url, enabled: true }, { where: { name } });
  const [row] = await SearchSetting.findOrCreate({ where: { orgId }, defaults: { orgId, defaultProvider: name } });
  await row.update({ defaultProvider: name, monthlyAllowance: settings.monthlyAllowance ?? 100, overageEnabled: settings.overageEnabled ?? false, overageMonthlyLimit: settings.overageMonthlyLimit ?? null });
  await bumpEpoch(env().redis); // the search gate reads these through the pods' cache
}
