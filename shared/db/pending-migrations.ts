import fs from 'fs';
import path from 'path';
import { QueryTypes, type Sequelize } from 'sequelize';

/**
 * Names of the migrations not yet applied, read the way migrate.ts's umzug reads them (the files
 * `migrations/*.js` beside this module, by name, against the names recorded in `schema_migrations`)
 * but without loading umzug: readiness checks this in every process at start, and umzug with its
 * dependencies would cost each of them about 16 MB for one set difference. A test holds the two
 * answers equal.
 */
export async function pendingMigrations(sequelize: Sequelize): Promise<string[]> {
  const dir = path.join(__dirname, 'migrations');
  const all = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.js'))
    .map((f) => path.basename(f, '.js'))
    .sort();
  const [table] = await sequelize.query<{ present: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS present", { type: QueryTypes.SELECT });
  if (!table?.present) return all;
  const rows = await sequelize.query<{ name: string }>('SELECT name FROM schema_migrations', { type: QueryTypes.SELECT });
  const applied = new Set(rows.map((r) => r.name));
  return all.filter((name) => !applied.has(name));
}
