import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

export type ReservationState = 'reserved' | 'settled' | 'released';

/**
 * Credits held for one request before its upstream call, then settled at the real cost or released.
 * `requestId` is unique, so settling or releasing twice is a no-op.
 */
export class CreditReservation extends SModel<InferAttributes<CreditReservation>, InferCreationAttributes<CreditReservation>> {
  declare id: CreationOptional<string>;
  declare orgId: string;
  declare requestId: string;
  declare amountMicros: string;
  declare settledMicros: CreationOptional<string | null>;
  declare state: CreationOptional<ReservationState>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    CreditReservation.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        orgId: { type: DataTypes.UUID, allowNull: false },
        requestId: { type: DataTypes.STRING, allowNull: false, unique: true },
        amountMicros: { type: DataTypes.BIGINT, allowNull: false },
        settledMicros: { type: DataTypes.BIGINT, allowNull: true },
        state: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'reserved' },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'credit_reservations' },
    );
  }
}
