import { Sequelize } from 'sequelize';
import { config } from '../config/env';
import { initModels } from './models';
import { closeUsagePool } from '../metering/usage';

let instance: Sequelize | undefined;

/** The process's one Sequelize instance, with every model initialised. */
export function db(url = config().databaseUrl): Sequelize {
  if (!instance) {
    instance = new Sequelize(url, {
      dialect: 'postgres',
      logging: false,
      pool: { max: 10, min: 1, idle: 10_000 },
      define: { underscored: true },
    });
    initModels(instance);
  }
  return instance;
}

export async function closeDb(): Promise<void> {
  await closeUsagePool();
  if (instance) {
    const s = instance;
    instance = undefined;
    await s.close();
  }
}
