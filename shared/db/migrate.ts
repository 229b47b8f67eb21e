import path from 'path';
import { Sequelize } from 'sequelize';
import { Umzug, SequelizeStorage } from 'umzug';

/**
 * Migrations are files in ./migrations named `NNNN-what.ts`, each exporting `up` and `down`
 * over a QueryInterface. They run in name order and are recorded in `schema_migrations`.
 */
export function migrator(sequelize: Sequelize) {
  return new Umzug({
    migrations: {
      glob: ['migrations/*.js', { cwd: __dirname }],
      resolve: ({ name, path: file, context }) => {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const mod = require(file!);
        return { name: path.basename(name, '.js'), up: () => mod.up(context), down: () => mod.down(context) };
      },
    },
    context: sequelize.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize, tableName: 'schema_migrations' }),
    logger: undefined,
  });
}

export async function migrate(sequelize: Sequelize): Promise<string[]> {
  // A transaction-level advisory lock so that two release processes never migrate at once.
  await sequelize.query('SELECT pg_advisory_lock(727274)');
  try {
    const done = await migrator(sequelize).up();
    return done.map((m) => m.name);
  } finally {
    await sequelize.query('SELECT pg_advisory_unlock(727274)');
  }
}
