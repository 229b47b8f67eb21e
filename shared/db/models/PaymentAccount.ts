import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/** An organization's customer record at the payment processor. */
export class PaymentAccount extends SModel<InferAttributes<PaymentAccount>, InferCreationAttributes<PaymentAccount>> {
  declare id: CreationOptional<string>;
  declare orgId: string;
  declare customerId: string;
  declare status: CreationOptional<string>;
  declare metadata: CreationOptional<Record<string, unknown>>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    PaymentAccount.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        orgId: { type: DataTypes.UUID, allowNull: false },
        customerId: { type: DataTypes.STRING, allowNull: false },
        status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'active' },
        metadata: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'payment_accounts' },
    );
  }
}
