import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

export type MembershipRole = 'owner' | 'member';

export class Membership extends SModel<InferAttributes<Membership>, InferCreationAttributes<Membership>> {
  declare id: CreationOptional<string>;
  declare userId: string;
  declare orgId: string;
  declare role: MembershipRole;
  /** Searches per month for this member (Teams plans); null inherits the org limit. */
  declare searchCap: CreationOptional<number | null>;
  /** Off: this member's searches answer `quota_exceeded`. */
  declare searchEnabled: CreationOptional<boolean>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    Membership.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        userId: { type: DataTypes.UUID, allowNull: false },
        orgId: { type: DataTypes.UUID, allowNull: false },
        role: { type: DataTypes.ENUM('owner', 'member'), allowNull: false },
        searchCap: { type: DataTypes.INTEGER, allowNull: true },
        searchEnabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'memberships' },
    );
  }
}
