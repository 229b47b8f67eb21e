import { Client } from 'pg';
import { Sequelize } from 'sequelize';

/**
 * A database of the suite's own, `<test database>_<suffix>`, created empty before the suite and
 * dropped after it, for tests that run migrations themselves. Call in a `describe`; `sequelize()` is
 * its connection.
 */
export function scratchDatabase(suffix: string): { sequelize(): Sequelize } {
  const base = new URL(process.env.DATABASE_URL!);
  const name = `${base.pathname.slice(1)}_${suffix}`;
  let admin: Client;
  let sequelize: Sequelize | undefined;

  before(async () => {
    admin = new Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${name}"`);
    await admin.query(`CREATE DATABASE "${name}"`);
    const url = new URL(base);
    url.pathname = `/${name}`;
    sequelize = new Sequelize(url.toString(), { logging: false });
  });

  after(async () => {
    await sequelize?.close();
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  });

  return { sequelize: () => sequelize! };
}
