import { DataTypes, QueryInterface } from 'sequelize';

const id = { type: DataTypes.UUID, primaryKey: true, allowNull: false };
const stamps = {
  created_at: { type: DataTypes.DATE, allowNull: false },
  updated_at: { type: DataTypes.DATE, allowNull: false },
};
const jsonb = { type: DataTypes.JSONB, allowNull: false, defaultValue: {} };

export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('plans', {
    id,
    name: { type: DataTypes.STRING, allowNull: false, unique: true },
    lane_limits: jsonb,
    entitlements: jsonb,
    ...stamps,
  });
  await q.createTable('organizations', {
    id,
    name: { type: DataTypes.STRING, allowNull: false },
    slug: { type: DataTypes.STRING, allowNull: false, unique: true },
    plan_id: { type: DataTypes.UUID, allowNull: true, references: { model: 'plans', key: 'id' } },
    lane_overrides: jsonb,
    entitlements: jsonb,
    policies: jsonb,
    ...stamps,
  });
  await q.createTable('users', {
    id,
    email: { type: DataTypes.STRING, allowNull: false, unique: true },
    name: { type: DataTypes.STRING, allowNull: true },
    is_platform_admin: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    ...stamps,
  });
  await q.createTable('memberships', {
    id,
    user_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    org_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'organizations', key: 'id' }, onDelete: 'CASCADE' },
    role: { type: DataTypes.ENUM('owner', 'member'), allowNull: false },
    ...stamps,
  });
  await q.addIndex('memberships', ['user_id', 'org_id'], { unique: true });
  await q.createTable('projects', {
    id,
    org_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'organizations', key: 'id' }, onDelete: 'CASCADE' },
    name: { type: DataTypes.STRING, allowNull: false },
    slug: { type: DataTypes.STRING, allowNull: false },
    ...stamps,
  });
  await q.addIndex('projects', ['org_id', 'slug'], { unique: true });
  await q.createTable('api_keys', {
    id,
    org_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'organizations', key: 'id' }, onDelete: 'CASCADE' },
    project_id: { type: DataTypes.UUID, allowNull: true, references: { model: 'projects', key: 'id' }, onDelete: 'SET NULL' },
    name: { type: DataTypes.STRING, allowNull: true },
    prefix: { type: DataTypes.STRING(24), allowNull: false },
    key_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    revoked_at: { type: DataTypes.DATE, allowNull: true },
    ...stamps,
  });
  await q.addIndex('api_keys', ['org_id']);
  await q.createTable('routing_plans', {
    id,
    org_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'organizations', key: 'id' }, onDelete: 'CASCADE' },
    project_id: { type: DataTypes.UUID, allowNull: true, references: { model: 'projects', key: 'id' }, onDelete: 'SET NULL' },
    name: { type: DataTypes.STRING, allowNull: false },
    model_map: jsonb,
    ...stamps,
  });
  await q.createTable('providers', {
    id,
    name: { type: DataTypes.STRING, allowNull: false, unique: true },
    kind: { type: DataTypes.STRING, allowNull: false },
    base_url: { type: DataTypes.STRING, allowNull: false },
    api_key_encrypted: { type: DataTypes.TEXT, allowNull: true },
    ...stamps,
  });
  await q.createTable('models', {
    id,
    public_id: { type: DataTypes.STRING, allowNull: false, unique: true },
    provider_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'providers', key: 'id' } },
    upstream_name: { type: DataTypes.STRING, allowNull: false },
    display_name: { type: DataTypes.STRING, allowNull: true },
    capabilities: jsonb,
    context_window: { type: DataTypes.INTEGER, allowNull: true },
    max_output_tokens: { type: DataTypes.INTEGER, allowNull: true },
    limits: jsonb,
    config: jsonb,
    prices: jsonb,
    tokenizer: { type: DataTypes.STRING, allowNull: false, defaultValue: 'o200k_base' },
    enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    ...stamps,
  });
  await q.createTable('usage_events', {
    id,
    request_id: { type: DataTypes.STRING, allowNull: false, unique: true },
    org_id: { type: DataTypes.UUID, allowNull: false },
    project_id: { type: DataTypes.UUID, allowNull: true },
    api_key_id: { type: DataTypes.UUID, allowNull: true },
    model: { type: DataTypes.STRING, allowNull: false },
    modality: { type: DataTypes.STRING, allowNull: false },
    lane: { type: DataTypes.STRING, allowNull: true },
    input_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    output_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    units: jsonb,
    passthrough: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    created_at: { type: DataTypes.DATE, allowNull: false },
  });
  await q.addIndex('usage_events', ['org_id', 'created_at']);
}

export async function down(q: QueryInterface): Promise<void> {
  for (const t of ['usage_events', 'models', 'providers', 'routing_plans', 'api_keys', 'projects', 'memberships', 'users', 'organizations', 'plans']) {
    await q.dropTable(t);
  }
  await q.sequelize.query('DROP TYPE IF EXISTS "enum_memberships_role"');
}
