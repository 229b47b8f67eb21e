import crypto from 'crypto';
import fs from 'fs';
import path from 'path';

/**
 * The embedded default remembers its service URLs and a generated SECRET_KEY in `.data/env.json`
 * (git-ignored), so `npx gateway ...` and a restart of `npm start` find the same data.
 * Variables already set in the environment always win.
 */
const FILE = path.resolve(process.cwd(), '.data', 'env.json');

export function readLocalEnv(): Record<string, string> {
  try {
    return JSON.parse(fs.readFileSync(FILE, 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}

export function writeLocalEnv(values: Record<string, string>): void {
  fs.mkdirSync(path.dirname(FILE), { recursive: true });
  fs.writeFileSync(FILE, JSON.stringify({ ...readLocalEnv(), ...values }, null, 2), { mode: 0o600 });
}

/** Applies remembered values for variables the environment does not set. */
export function applyLocalEnv(): void {
  for (const [k, v] of Object.entries(readLocalEnv())) if (process.env[k] === undefined) process.env[k] = v;
}

/** A SECRET_KEY for local use: the environment's, else the remembered one, else a new one. */
export function localSecret(): string {
  const existing = process.env.SECRET_KEY ?? readLocalEnv().SECRET_KEY;
  if (existing) return existing;
  const s = crypto.randomBytes(32).toString('base64url');
  writeLocalEnv({ SECRET_KEY: s });
  return s;
}
