import { QueryInterface } from 'sequelize';

/**
 * Key rotation with a grace period (issue 31): the key keeps its id (so its budget, limits and usage
 * carry on) and gets a new secret; the previous secret's hash works until `previous_expires_at`.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`
    ALTER TABLE api_keys ADD COLUMN previous_key_hash varchar(64), ADD COLUMN previous_expires_at timestamptz;
    CREATE UNIQUE INDEX api_keys_previous_key_hash ON api_keys (previous_key_hash) WHERE previous_key_hash IS NOT NULL;`);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DROP INDEX IF EXISTS api_keys_previous_key_hash; ALTER TABLE api_keys DROP COLUMN previous_key_hash, DROP COLUMN previous_expires_at;');
}
