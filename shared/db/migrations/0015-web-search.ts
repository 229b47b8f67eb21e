import { DataTypes, QueryInterface } from 'sequelize';

/**
 * Web search rails (issue 15): keys that belong to a member, member search caps and switches, a
 * fetch price and a platform default on providers, the plan's allowance becoming the default of an
 * org's own allowance (null = inherit), organizations' own provider keys, and the search usage ledger.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.addColumn('api_keys', 'user_id', { type: DataTypes.UUID, allowNull: true, references: { model: 'users', key: 'id' }, onDelete: 'SET NULL' });
  await q.addColumn('memberships', 'search_cap', { type: DataTypes.INTEGER, allowNull: true });
  await q.addColumn('memberships', 'search_enabled', { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true });
  await q.addColumn('search_providers', 'fetch_price_micros', { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 });
  await q.addColumn('search_providers', 'is_default', { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false });
  await q.changeColumn('search_settings', 'monthly_allowance', { type: DataTypes.INTEGER, allowNull: true, defaultValue: null });
  await q.sequelize.query(`
    CREATE TABLE search_org_keys (
      id uuid PRIMARY KEY,
      org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      provider varchar(255) NOT NULL,
      key_encrypted text NOT NULL,
      last4 varchar(4) NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      UNIQUE (org_id, provider)
    )`);
  await q.sequelize.query(`
    CREATE TABLE search_usage (
      id uuid PRIMARY KEY,
      request_id varchar(255) NOT NULL UNIQUE,
      org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      user_id uuid NULL,
      api_key_id uuid NULL,
      project_id uuid NULL,
      period char(7) NOT NULL,
      kind varchar(16) NOT NULL,
      provider varchar(255) NOT NULL,
      key_source varchar(16) NOT NULL,
      charge_class varchar(16) NOT NULL,
      price_micros bigint NOT NULL,
      created_at timestamptz NOT NULL
    )`);
  await q.sequelize.query('CREATE INDEX search_usage_org_period ON search_usage (org_id, period)');
}

export async function down(q: QueryInterface): Promise<void> {
  await q.dropTable('search_usage');
  await q.dropTable('search_org_keys');
  await q.sequelize.query('UPDATE search_settings SET monthly_allowance = 0 WHERE monthly_allowance IS NULL');
  await q.changeColumn('search_settings', 'monthly_allowance', { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 });
  await q.removeColumn('search_providers', 'is_default');
  await q.removeColumn('search_providers', 'fetch_price_micros');
  await q.removeColumn('memberships', 'search_enabled');
  await q.removeColumn('memberships', 'search_cap');
  await q.removeColumn('api_keys', 'user_id');
}
