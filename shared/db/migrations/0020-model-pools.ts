import { QueryInterface } from 'sequelize';

/**
 * Model pools (issue 28): a model's deployments and fallbacks live on its row; every existing model
 * becomes a pool of one named after its provider. The `model_pools` table held worker settings that
 * nothing read (scheduler-endpoints tunes workers) and goes; `/admin/v1/inference-model-pools` now
 * serves the models' pools. A usage event names the deployment that served it.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE models ADD COLUMN deployments jsonb NOT NULL DEFAULT '[]'::jsonb`);
  await q.sequelize.query(`ALTER TABLE models ADD COLUMN fallbacks jsonb NOT NULL DEFAULT '[]'::jsonb`);
  await q.sequelize.query(`
    UPDATE models m SET deployments = jsonb_build_array(jsonb_build_object('name', p.name, 'provider', p.name, 'upstream', m.upstream_name))
      FROM providers p WHERE p.id = m.provider_id`);
  await q.sequelize.query('ALTER TABLE usage_events ADD COLUMN deployment text');
  await q.sequelize.query('DROP TABLE IF EXISTS model_pools');
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`
    CREATE TABLE model_pools (id uuid PRIMARY KEY, name varchar(255) NOT NULL UNIQUE, pool varchar(32) NOT NULL, lane varchar(32) NOT NULL,
      concurrency integer NOT NULL, models jsonb NOT NULL DEFAULT '[]'::jsonb, settings jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL)`);
  await q.sequelize.query('ALTER TABLE usage_events DROP COLUMN deployment');
  await q.sequelize.query('ALTER TABLE models DROP COLUMN fallbacks');
  await q.sequelize.query('ALTER TABLE models DROP COLUMN deployments');
}
