import { DataTypes, QueryInterface } from 'sequelize';

/** Prepaid credit per organization and the reservations held against it. */
export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('wallets', {
    id: { type: DataTypes.UUID, primaryKey: true, allowNull: false },
    org_id: { type: DataTypes.UUID, allowNull: false, unique: true, references: { model: 'organizations', key: 'id' }, onDelete: 'CASCADE' },
    balance_micros: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
    reserved_micros: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
    credits_bound: { type: DataTypes.BIGINT, allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await q.createTable('credit_reservations', {
    id: { type: DataTypes.UUID, primaryKey: true, allowNull: false },
    org_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'organizations', key: 'id' }, onDelete: 'CASCADE' },
    request_id: { type: DataTypes.STRING, allowNull: false, unique: true },
    amount_micros: { type: DataTypes.BIGINT, allowNull: false },
    settled_micros: { type: DataTypes.BIGINT, allowNull: true },
    state: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'reserved' },
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await q.addIndex('credit_reservations', ['org_id', 'state']);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.dropTable('credit_reservations');
  await q.dropTable('wallets');
}
