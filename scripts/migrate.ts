import { config } from '../shared/config/env';
import { db, closeDb } from '../shared/db/sequelize';
import { migrate } from '../shared/db/migrate';

/** The `release` process: run pending migrations, then exit. */
async function main(): Promise<void> {
  config();
  const done = await migrate(db());
  process.stdout.write(done.length ? `applied: ${done.join(', ')}\n` : 'database is up to date\n');
  await closeDb();
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`migration failed: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
