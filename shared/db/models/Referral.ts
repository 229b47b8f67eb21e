import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/** A referral code and what it earned. */
export class Referral extends SModel<InferAttributes<Referral>, InferCreationAttributes<Referral>> {
  declare id: CreationOptional<string>;
  declare code: string;
  declare referrerUserId: string | null;
  declare referredOrgId: string | null;
  declare status: CreationOptional<string>;
  declare rewardMicros: CreationOptional<string>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    Referral.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        code: { type: DataTypes.STRING(64), allowNull: false },
        referrerUserId: { type: DataTypes.UUID, allowNull: true },
        referredOrgId: { type: DataTypes.UUID, allowNull: true },
        status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'pending' },
        rewardMicros: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'referrals' },
    );
  }
}
