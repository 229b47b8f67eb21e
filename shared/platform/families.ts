import { config } from '../config/env';

/** Scope families of the management API (spec: "Management API"). A scope is `<family>:read|write`. */
export const FAMILIES = [
  'stats',
  'organizations',
  'plans',
  'providers',
  'platform-credentials',
  'inference-models',
  'search',
  'payments-processor',
  'referrals',
  'capability-policies',
  'users',
  'audit-logs',
  'scheduler-endpoints',
  'invite-codes',
  'billing',
] as const;

export type Family = (typeof FAMILIES)[number];
export type Access = 'read' | 'write';

/** First path segment under /admin/v1 → family. The payment processor's segment is configured. */
const SEGMENTS: Record<string, Family> = {
  stats: 'stats',
  'usage-stats': 'stats',
  organizations: 'organizations',
  plans: 'plans',
  providers: 'providers',
  'platform-credentials': 'platform-credentials',
  'inference-models': 'inference-models',
  'inference-model-pools': 'inference-models',
  'inference-tokenizer-profiles': 'inference-models',
  'search-providers': 'search',
  'search-settings': 'search',
  referrals: 'referrals',
  'capability-policies': 'capability-policies',
  users: 'users',
  'audit-logs': 'audit-logs',
  'scheduler-endpoints': 'scheduler-endpoints',
  'invite-codes': 'invite-codes',
  billing: 'billing',
};

/** The family a path (relative to /admin/v1, e.g. `/plans/123`) belongs to, or undefined. */
export function familyOf(path: string): Family | undefined {
  const segment = path.split('/')[1] ?? '';
  if (segment === config().paymentsProcessorName) return 'payments-processor';
  return Object.prototype.hasOwnProperty.call(SEGMENTS, segment) ? SEGMENTS[segment] : undefined;
}

/**
 * Paths no management key may reach, whatever its scopes: platform keys, impersonation and
 * platform-admin grants. A platform admin's own token opens them (api/admin/auth.ts).
 */
export function isPlatformAdminPath(path: string): boolean {
  const p = path.replace(/\/+$/, '');
  return /^\/platform-keys(\/|$)/.test(p) || /^\/users\/[^/]+\/(impersonate|platform-admin)$/.test(p);
}

/** GET and HEAD need `:read`; every other method `:write`. */
export function accessFor(method: string): Access {
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}

/** `:write` implies `:read`. */
export function allows(scopes: readonly string[], family: Family, access: Access): boolean {
  return scopes.includes(`${family}:write`) || (access === 'read' && scopes.includes(`${family}:read`));
}

export const ALL_SCOPES: string[] = FAMILIES.flatMap((f) => [`${f}:read`, `${f}:write`]);

/** Parses `stats:read,users:write`; throws with the bad entries named. */
export function parseScopes(input: string | string[]): string[] {
  const list = (Array.isArray(input) ? input : input.split(',')).map((s) => s.trim()).filter(Boolean);
  const bad = list.filter((s) => !ALL_SCOPES.includes(s));
  if (bad.length) throw new Error(`unknown scope(s): ${bad.join(', ')}; a scope is <family>:read or <family>:write with a family of ${FAMILIES.join(', ')}`);
  if (!list.length) throw new Error('give at least one scope');
  return [...new Set(list)];
}
