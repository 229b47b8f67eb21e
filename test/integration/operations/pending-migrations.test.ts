import { expect } from 'chai';
import { Sequelize } from 'sequelize';
import { migrator } from '../../../shared/db/migrate';
import { scratchDatabase } from '../../helpers/scratch-db';
import { pendingMigrations } from '../../../shared/db/pending-migrations';

/** Readiness reads pending migrations without umzug; its answer must be umzug's at every stage. */
describe('operations: pending migrations without umzug', function () {
  this.timeout(60_000);
  const scratch = scratchDatabase('pending');
  let sequelize: Sequelize;
  before(() => {
    sequelize = scratch.sequelize();
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
