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
  'request-logs': 'stats',
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

/**
 * The spelling the guard classifies (relative to /admin/v1): percent-encoded unreserved characters
 * decoded (`%70` → `p`; an encoded `/` stays encoded, as express keeps it inside one parameter),
 * lower case, empty segments dropped (double and trailing slashes), and, with `resolveDots`, `.` and
 * `..` resolved as a proxy in front would. Routing is case-sensitive and strict
 * (api/admin/admin-router.ts), so a path any route matches is its own canonical form up to case: the
 * guard sees the route that will run, and any other spelling is refused as its canonical form would
 * be, then reaches no handler.
 */
export function canonicalPath(path: string, resolveDots = true): string {
  const decoded = path.replace(/%([0-9a-f]{2})/gi, (m, hex: string) => {
    const c = String.fromCharCode(parseInt(hex, 16));
    return /[A-Za-z0-9\-._~]/.test(c) ? c : m;
  });
  const out: string[] = [];
  for (const seg of decoded.toLowerCase().split('/')) {
    if (seg === '' || (resolveDots && seg === '.')) continue;
    if (resolveDots && seg === '..') out.pop();
    else out.push(seg);
  }
  return `/${out.join('/')}`;
}

/** The family a path (relative to /admin/v1, e.g. `/plans/123`, any spelling) belongs to, or undefined. */
export function familyOf(path: string): Family | undefined {
  const segment = canonicalPath(path).split('/')[1] ?? '';
  if (segment === config().paymentsProcessorName) return 'payments-processor';
  return Object.prototype.hasOwnProperty.call(SEGMENTS, segment) ? SEGMENTS[segment] : undefined;
}

const ADMIN_PATHS = [/^\/platform-keys(\/|$)/, /^\/users\/[^/]+\/(impersonate|platform-admin)$/];

/**
 * Paths no management key may reach, whatever its scopes or spelling: platform keys, impersonation
 * and platform-admin grants. A platform admin's own token opens them (api/admin/auth.ts). Both readings
 * of dot segments count: express matches `/users/./platform-admin` with the id `.`.
 */
export function isPlatformAdminPath(path: string): boolean {
  const forms = [canonicalPath(path), canonicalPath(path, false)];
  return forms.some((p) => ADMIN_PATHS.some((re) => re.test(p)));
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
