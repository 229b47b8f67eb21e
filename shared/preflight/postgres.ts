import { Client } from 'pg';
import type { Sequelize } from 'sequelize';
import { explainPostgres, where } from '../startup/explain';
import { pendingMigrations } from '../db/pending-migrations';
import { fail, ok, SUPPORTED, versionStatus, warn, type Check } from './check';

/** Postgres reachable with the configured login, a supported version; its server version string. */
export async function checkPostgres(url: string): Promise<Check[]> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
    const version = rows[0].server_version;
    const vs = versionStatus(version, SUPPORTED.postgres);
    const label = SUPPORTED.postgres.label;
    return [
      ok('postgres', `Postgres answers at ${where(url)}`),
      vs === 'ok'
        ? ok('postgres version', `${version.split(' ')[0]} (supported ${label})`)
        : vs === 'old'
          ? fail('postgres version', `Postgres ${version} is older than supported (${label}): upgrade Postgres`)
          : warn('postgres version', `Postgres ${version} is newer than tested (${label})`),
    ];
  } catch (err) {
    return [fail('postgres', explainPostgres(err, url).message)];
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Every migration applied (the `release` step ran for this version). */
export async function checkMigrations(sequelize: Sequelize): Promise<Check> {
  const pending = await pendingMigrations(sequelize);
  if (!pending.length) return ok('migrations', 'database is up to date');
  return fail('migrations', `${pending.length} migration(s) pending (${pending.join(', ')}): run the release step \`node dist/scripts/migrate.js\` (or \`npx gateway migrate\`)`);
}
