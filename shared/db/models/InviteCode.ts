import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/** A sign-up invite code, optionally into an organization or onto a plan. */
export class InviteCode extends SModel<InferAttributes<InviteCode>, InferCreationAttributes<InviteCode>> {
  declare id: CreationOptional<string>;
  declare code: string;
  declare orgId: string | null;
  declare planId: string | null;
  declare maxUses: CreationOptional<number>;
  declare uses: CreationOptional<number>;
  declare expiresAt: Date | null;
  declare disabled: CreationOptional<boolean>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    InviteCode.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        code: { type: DataTypes.STRING(64), allowNull: false },
        orgId: { type: DataTypes.UUID, allowNull: true },
        planId: { type: DataTypes.UUID, allowNull: true },
        maxUses: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 },
        uses: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        expiresAt: { type: DataTypes.DATE, allowNull: true },
        disabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'invite_codes' },
    );
  }
}
