/** One line of a preflight or `gateway doctor` report. */
export interface Check {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  /** One line: what was found and, unless ok, what fixes it. */
  detail: string;
}

export const ok = (name: string, detail: string): Check => ({ name, status: 'ok', detail });
export const warn = (name: string, detail: string): Check => ({ name, status: 'warn', detail });
export const fail = (name: string, detail: string): Check => ({ name, status: 'fail', detail });

/** Supported server versions (docs/operations.md, *Supported versions*): [minimum, first untested major]. */
export const SUPPORTED = {
  redis: { min: [7, 0], untested: 9, label: '7.0 to 8.x' },
  postgres: { min: [13, 0], untested: 19, label: '13 to 18' },
} as const;

/** Where `version` ("7.0.15", "15.20 (Debian…)") falls in a supported range. */
export function versionStatus(version: string, range: { min: readonly number[]; untested: number }): 'ok' | 'old' | 'new' {
  const [major = 0, minor = 0] = version.split(/[.\s]/).map((n) => Number.parseInt(n, 10) || 0);
  if (major < range.min[0] || (major === range.min[0] && minor < range.min[1])) return 'old';
  return major >= range.untested ? 'new' : 'ok';
}
