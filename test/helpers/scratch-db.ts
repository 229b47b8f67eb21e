import { Client } from 'pg';
import { Sequelize } from 'sequelize';

/**
 * A database of the suite's own, `<test database>_<suffix>`, created empty before the suite and
 * dropped after it, for tests that run migrations themselves. Call in a `describe`; `sequelize()` is
 * its connection, `url` its address (for a child process).
 */
export function scratchDatabase(suffix: string): { sequelize(): Sequelize; url: string } {
  const base = new URL(process.env.DATABASE_URL!);
  const name = `${base.pathname.slice(1)}_${suffix}`;
  const own = new URL(base);
  own.pathname = `/${name}`;
  let admin: Client;
  let sequelize: Sequelize | undefined;

  before(async () => {
    admin = new Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${name}"`);
    await admin.query(`CREATE DATABASE "${name}"`);
    sequelize = new Sequelize(own.toString(), { logging: false });
  });

  after(async () => {
    await sequelize?.close();
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  });

  return { sequelize: () => sequelize!, url: own.toString() };
}
