import { expect } from 'chai';
import { QueryTypes, Sequelize } from 'sequelize';
import { migrator } from '../../../shared/db/migrate';
import { scratchDatabase } from '../../helpers/scratch-db';

/** Migration 0041 (a unique index on lower(email)) stops, naming them, on emails two users already share. */
describe('operations: the case-insensitive email index migration', function () {
  this.timeout(120_000);
  const scratch = scratchDatabase('emailindex');
  let sequelize: Sequelize;
  before(() => {
    sequelize = scratch.sequelize();
  });

  it('refuses with the list of shared emails, then creates the index once they are resolved', async () => {
    await migrator(sequelize).up({ to: '0040-invitation-inviter' });
    const add = (email: string) => sequelize.query('INSERT INTO users (id, email, created_at, updated_at) VALUES (gen_random_uuid(), :email, now(), now())', { replacements: { email } });
    await add('Dup@Example.com');
    await add('dup@example.com');
    await add('solo@example.com');
    const failed = await migrator(sequelize).up().then(() => undefined, (err: Error) => err);
    expect(String(failed?.message)).to.include('dup@example.com x2').and.not.include('solo');
    await sequelize.query("DELETE FROM users WHERE email = 'Dup@Example.com'");
    await migrator(sequelize).up();
    const dup = await add('SOLO@example.com').then(() => undefined, (err: { parent?: { code?: string } }) => err);
    expect(dup?.parent?.code, 'a case variant is refused by the index').to.equal('23505');
    const [{ n }] = await sequelize.query<{ n: number }>('SELECT count(*)::int AS n FROM users', { type: QueryTypes.SELECT });
    expect(n).to.equal(2);
  });
});
