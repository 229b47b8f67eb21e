import crypto from 'crypto';
import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { expectErrorEnvelope } from '../../helpers/errors';
import { Membership, SearchProvider, SearchSetting, SearchUsage, User } from '../../../shared/db/models';
import { createApiKey } from '../../../shared/tenancy/ops';
import { encrypt } from '../../../shared/crypto';
import { bumpEpoch } from '../../../shared/cache/epoch';

export interface SearchOrg extends TestOrg {
  /** Adds a member with their own key. */
  member(opts?: { cap?: number | null; enabled?: boolean }): Promise<{ userId: string; key: string }>;
}

/** An org on the pro plan with the given search settings (none: plan defaults). */
export async function searchOrg(settings?: Partial<{ monthlyAllowance: number | null; overageEnabled: boolean; overageMonthlyLimit: number | null; defaultProvider: string | null; allowedProviders: string[] }>, entitlements: Record<string, unknown> = {}): Promise<SearchOrg> {
  const o = await buildOrg(env().redis, { entitlements });
  if (settings) await SearchSetting.create({ orgId: o.org.id, ...settings });
  return {
    ...o,
    async member(opts = {}) {
      const user = await User.create({ email: `m-${crypto.randomBytes(5).toString('hex')}@example.com`, name: 'Member' });
      await Membership.create({ userId: user.id, orgId: o.org.id, role: 'member', searchCap: opts.cap ?? null, searchEnabled: opts.enabled ?? true });
      const k = await createApiKey(env().redis, { orgId: o.org.id, userId: user.id });
      return { userId: user.id, key: k.key };
    },
  };
}

/** A provider of its own for one test (unique name), on the simulator. */
export async function testProvider(kind: 'brave' | 'tavily' | 'exa', opts: { enabled?: boolean; platformKey?: string | null; priceMicros?: number } = {}): Promise<SearchProvider> {
  const row = await SearchProvider.create({
    name: `${kind}-${crypto.randomBytes(4).toString('hex')}`,
    kind,
    baseUrl: `${env().simUrl}/${kind}`,
    enabled: opts.enabled ?? true,
    priceMicros: String(opts.priceMicros ?? 5000),
    apiKeyEncrypted: opts.platformKey === null ? null : encrypt(opts.platformKey ?? `sim-${kind}-platform-key`),
  });
  await bumpEpoch(env().redis);
  return row;
}

export function search(key: string, body: Record<string, unknown>): Promise<Reply> {
  return call('POST', '/v1/alpha/search', { headers: keyHeader(key), json: body });
}

export function expectSearchError(r: Reply, status: number, code: string): void {
  expect(r.status, r.text).to.equal(status);
  expectErrorEnvelope(r.text, code);
}

export async function ledger(orgId: string): Promise<SearchUsage[]> {
  return SearchUsage.findAll({ where: { orgId }, order: [['createdAt', 'ASC']] });
}

/** Runs `n` searches one after the other; returns their statuses. */
export async function searches(key: string, n: number, body: Record<string, unknown> = { query: 'q' }): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await search(key, body)).status);
  return out;
}

/**
 * One POST of raw JSON-RPC to `/mcp` (a message or a batch), as a Streamable HTTP client sends it,
 * under MCP-Protocol-Version `protocol` (null: no header). Batches need 2025-03-26.
 */
export function mcpPost(key: string, body: unknown, base = env().gw.url, timeoutMs = 20_000, protocol: string | null = '2025-03-26'): Promise<Response> {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(protocol ? { 'mcp-protocol-version': protocol } : {}) },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
}

/** A `tools/call` request. */
export const toolCall = (id: unknown, name: string, args: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
