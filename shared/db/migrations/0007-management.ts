import { DataTypes, QueryInterface } from 'sequelize';

const id = { type: DataTypes.UUID, primaryKey: true, allowNull: false };
const stamps = {
  created_at: { type: DataTypes.DATE, allowNull: false },
  updated_at: { type: DataTypes.DATE, allowNull: false },
};
const jsonb = { type: DataTypes.JSONB, allowNull: false, defaultValue: {} };
const jsonList = { type: DataTypes.JSONB, allowNull: false, defaultValue: [] };
const ref = (table: string, onDelete: 'CASCADE' | 'SET NULL', allowNull = false) => ({
  type: DataTypes.UUID,
  allowNull,
  references: { model: table, key: 'id' },
  onDelete,
});

/** The management API: platform keys, admin tokens, audit log, and the tables of its families. */
export async function up(q: QueryInterface): Promise<void> {
  await q.addColumn('users', 'deleted_at', { type: DataTypes.DATE, allowNull: true });
  await q.addColumn('users', 'policies', jsonb);

  for (const table of ['platform_keys', 'admin_tokens']) {
    await q.createTable(table, {
      id,
      user_id: ref('users', 'CASCADE'),
      name: { type: DataTypes.STRING, allowNull: true },
      prefix: { type: DataTypes.STRING(32), allowNull: false },
      key_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
      ...(table === 'platform_keys' ? { scopes: jsonList } : {}),
      revoked_at: { type: DataTypes.DATE, allowNull: true },
      revoked_reason: { type: DataTypes.STRING(32), allowNull: true },
      last_used_at: { type: DataTypes.DATE, allowNull: true },
      ...stamps,
    });
    await q.addIndex(table, ['user_id']);
  }

  await q.createTable('audit_logs', {
    id,
    actor_type: { type: DataTypes.STRING(16), allowNull: false },
    actor_id: { type: DataTypes.UUID, allowNull: true },
    actor_label: { type: DataTypes.STRING, allowNull: true },
    method: { type: DataTypes.STRING(8), allowNull: false },
    path: { type: DataTypes.STRING(512), allowNull: false },
    family: { type: DataTypes.STRING(32), allowNull: true },
    target_id: { type: DataTypes.STRING, allowNull: true },
    status: { type: DataTypes.INTEGER, allowNull: false },
    outcome: { type: DataTypes.STRING(16), allowNull: false },
    request_id: { type: DataTypes.STRING, allowNull: true },
    fields: jsonList,
    created_at: { type: DataTypes.DATE, allowNull: false },
  });
  await q.addIndex('audit_logs', ['created_at']);
  await q.addIndex('audit_logs', ['actor_id']);

  await q.createTable('platform_credentials', {
    id,
    provider_id: { ...ref('providers', 'CASCADE'), unique: true },
    label: { type: DataTypes.STRING, allowNull: true },
    secret_encrypted: { type: DataTypes.TEXT, allowNull: false },
    secret_hint: { type: DataTypes.STRING(8), allowNull: false },
    ...stamps,
  });

  await q.createTable('model_pools', {
    id,
    name: { type: DataTypes.STRING, allowNull: false, unique: true },
    pool: { type: DataTypes.STRING(32), allowNull: false },
    lane: { type: DataTypes.STRING(32), allowNull: false },
    concurrency: { type: DataTypes.INTEGER, allowNull: false },
    models: jsonList,
    settings: jsonb,
    ...stamps,
  });

  await q.createTable('tokenizer_profiles', {
    id,
    name: { type: DataTypes.STRING, allowNull: false, unique: true },
    encoding: { type: DataTypes.STRING(32), allowNull: false },
    description: { type: DataTypes.STRING, allowNull: true },
    ...stamps,
  });

  await q.createTable('search_providers', {
    id,
    name: { type: DataTypes.STRING, allowNull: false, unique: true },
    kind: { type: DataTypes.STRING(32), allowNull: false },
    base_url: { type: DataTypes.STRING, allowNull: false },
    enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    price_micros: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
    api_key_encrypted: { type: DataTypes.TEXT, allowNull: true },
    config: jsonb,
    ...stamps,
  });

  await q.createTable('search_settings', {
    id,
    org_id: { ...ref('organizations', 'CASCADE'), unique: true },
    default_provider: { type: DataTypes.STRING, allowNull: true },
    allowed_providers: jsonList,
    monthly_allowance: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    overage_enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    overage_monthly_limit: { type: DataTypes.INTEGER, allowNull: true },
    ...stamps,
  });

  await q.createTable('payment_accounts', {
    id,
    org_id: { ...ref('organizations', 'CASCADE'), unique: true },
    customer_id: { type: DataTypes.STRING, allowNull: false, unique: true },
    status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'active' },
    metadata: jsonb,
    ...stamps,
  });

  await q.createTable('referrals', {
    id,
    code: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    referrer_user_id: ref('users', 'SET NULL', true),
    referred_org_id: ref('organizations', 'SET NULL', true),
    status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'pending' },
    reward_micros: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
    ...stamps,
  });

  await q.createTable('scheduler_endpoints', {
    id,
    queue: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    concurrency: { type: DataTypes.INTEGER, allowNull: true },
    priority_step: { type: DataTypes.INTEGER, allowNull: true },
    max_waiting: { type: DataTypes.INTEGER, allowNull: true },
    enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    ...stamps,
  });

  await q.createTable('invite_codes', {
    id,
    code: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    org_id: ref('organizations', 'CASCADE', true),
    plan_id: ref('plans', 'SET NULL', true),
    max_uses: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 },
    uses: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    expires_at: { type: DataTypes.DATE, allowNull: true },
    disabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    ...stamps,
  });

  await q.createTable('billing_records', {
    id,
    org_id: ref('organizations', 'CASCADE'),
    kind: { type: DataTypes.STRING(16), allowNull: false },
    amount_micros: { type: DataTypes.BIGINT, allowNull: false },
    note: { type: DataTypes.STRING, allowNull: true },
    actor: { type: DataTypes.STRING, allowNull: true },
    ...stamps,
  });
  await q.addIndex('billing_records', ['org_id', 'created_at']);
}

export async function down(q: QueryInterface): Promise<void> {
  for (const t of [
    'billing_records', 'invite_codes', 'scheduler_endpoints', 'referrals', 'payment_accounts', 'search_settings',
    'search_providers', 'tokenizer_profiles', 'model_pools', 'platform_credentials', 'audit_logs', 'admin_tokens', 'platform_keys',
  ]) {
    await q.dropTable(t);
  }
  await q.removeColumn('users', 'policies');
  await q.removeColumn('users', 'deleted_at');
}
