import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/**
 * An organization's prepaid credit, in micro-dollars. `reservedMicros` is held by open reservations
 * (see CreditReservation); the spendable amount is `balanceMicros - reservedMicros`.
 * `creditsBound` caps one reservation (402 `reservation_too_large` names it); null: no cap.
 * Money moves only in Postgres, in row-locked transactions.
 */
export class Wallet extends SModel<InferAttributes<Wallet>, InferCreationAttributes<Wallet>> {
  declare id: CreationOptional<string>;
  declare orgId: string;
  declare balanceMicros: CreationOptional<string>;
  declare reservedMicros: CreationOptional<string>;
  declare creditsBound: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    Wallet.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        orgId: { type: DataTypes.UUID, allowNull: false, unique: true },
        balanceMicros: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
        reservedMicros: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
        creditsBound: { type: DataTypes.BIGINT, allowNull: true },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'wallets' },
    );
  }
}
