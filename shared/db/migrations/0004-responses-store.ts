import { DataTypes, QueryInterface } from 'sequelize';

/** Stored responses of the responses dialect, per organization, for `previous_response_id`. */
export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('stored_responses', {
    id: { type: DataTypes.STRING(64), primaryKey: true, allowNull: false },
    org_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'organizations', key: 'id' }, onDelete: 'CASCADE' },
    project_id: { type: DataTypes.UUID, allowNull: true },
    api_key_id: { type: DataTypes.UUID, allowNull: true },
    model: { type: DataTypes.STRING, allowNull: false },
    conversation: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
    response: { type: DataTypes.JSONB, allowNull: false },
    created_at: { type: DataTypes.DATE, allowNull: false },
  });
  await q.addIndex('stored_responses', ['org_id', 'created_at']);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.dropTable('stored_responses');
}
