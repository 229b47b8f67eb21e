import { DataTypes, QueryInterface } from 'sequelize';

/** Stored images (generated, edited, uploaded) of an organization; they expire 7 days after creation. */
export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('images', {
    id: { type: DataTypes.STRING(64), primaryKey: true, allowNull: false },
    org_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'organizations', key: 'id' }, onDelete: 'CASCADE' },
    project_id: { type: DataTypes.UUID, allowNull: true },
    api_key_id: { type: DataTypes.UUID, allowNull: true },
    request_id: { type: DataTypes.STRING, allowNull: false },
    source: { type: DataTypes.STRING(16), allowNull: false },
    model: { type: DataTypes.STRING, allowNull: true },
    format: { type: DataTypes.STRING(8), allowNull: false },
    width: { type: DataTypes.INTEGER, allowNull: false },
    height: { type: DataTypes.INTEGER, allowNull: false },
    bytes: { type: DataTypes.INTEGER, allowNull: false },
    storage_key: { type: DataTypes.STRING, allowNull: false },
    source_image_ids: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
    seed: { type: DataTypes.BIGINT, allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    expires_at: { type: DataTypes.DATE, allowNull: false },
  });
  await q.addIndex('images', ['expires_at']);
  await q.addIndex('images', ['org_id', 'created_at']);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.dropTable('images');
}
