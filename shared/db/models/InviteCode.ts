import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/** An invite code, optionally into an organization (with the role it gives, and the one email that may redeem it) or onto a plan. */
export class InviteCode extends SModel<InferAttributes<InviteCode>, InferCreationAttributes<InviteCode>> {
  declare id: CreationOptional<string>;
  declare code: string;
  declare orgId: string | null;
  declare planId: string | null;
  declare email: CreationOptional<string | null>;
  declare role: CreationOptional<'owner' | 'member'>;
  declare maxUses: CreationOptional<number>;
  declare uses: CreationOptional<number>;
  declare expiresAt: Date | null;
  declare disabled: CreationOptional<boolean>;
  /** The member who made it on the dashboard (null: an operator); revoked when they stop being an owner. */
  declare invitedBy: CreationOptional<string | null>;
  /** When its link was mailed to the invitee: the members page no longer shows it. */
  declare mailedAt: CreationOptional<Date | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    InviteCode.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        code: { type: DataTypes.STRING(64), allowNull: false },
        orgId: { type: DataTypes.UUID, allowNull: true },
        planId: { type: DataTypes.UUID, allowNull: true },
        email: { type: DataTypes.STRING(320), allowNull: true },
        role: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'member' },
        maxUses: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 },
        uses: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        expiresAt: { type: DataTypes.DATE, allowNull: true },
        disabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        invitedBy: { type: DataTypes.UUID, allowNull: true },
        mailedAt: { type: DataTypes.DATE, allowNull: true },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'invite_codes' },
    );
  }
}
