import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/** A money movement on an organization's wallet (top-up, credit, adjustment), in micro-dollars. */
export class BillingRecord extends SModel<InferAttributes<BillingRecord>, InferCreationAttributes<BillingRecord>> {
  declare id: CreationOptional<string>;
  declare orgId: string;
  declare kind: string;
  declare amountMicros: string;
  declare note: string | null;
  declare actor: string | null;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    BillingRecord.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        orgId: { type: DataTypes.UUID, allowNull: false },
        kind: { type: DataTypes.STRING(16), allowNull: false },
        amountMicros: { type: DataTypes.BIGINT, allowNull: false },
        note: { type: DataTypes.STRING, allowNull: true },
        actor: { type: DataTypes.STRING, allowNull: true },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'billing_records' },
    );
  }
}
