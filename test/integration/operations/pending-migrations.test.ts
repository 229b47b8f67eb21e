import { expect } from 'chai';
import { Client } from 'pg';
import { Sequelize } from 'sequelize';
import { migrator } from '../../../shared/db/migrate';
import { pendingMigrations } from '../../../shared/db/pending-migrations';

/** Readiness reads pending migrations without umzug; its answer must be umzug's at every stage. */
describe('operations: pending migrations without umzug', function () {
  this.timeout(60_000);
  const base = new URL(process.env.DATABASE_URL!);
  const name = `${base.pathname.slice(1)}_pending`;
  let admin: Client;
  let sequelize: Sequelize;

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

  const umzugPending = async () => (await migrator(sequelize).pending()).map((m) => m.name);

  it('equals umzug on an empty database, part way, and when up to date', async () => {
    const all = await umzugPending();
    expect(all.length).to.be.greaterThan(3);
    expect(await pendingMigrations(sequelize)).to.deep.equal(all);

    await migrator(sequelize).up({ to: all[2] });
    expect(await umzugPending()).to.deep.equal(all.slice(3));
    expect(await pendingMigrations(sequelize)).to.deep.equal(all.slice(3));

    await migrator(sequelize).up();
    expect(await pendingMigrations(sequelize)).to.deep.equal([]);
    expect(await umzugPending()).to.deep.equal([]);
  });
});
