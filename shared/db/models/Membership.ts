import type { BudgetPeriod } from './ApiKey';
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
  /** Member limits (docs/keys.md): on every key of this member in the org, beside the key's own; null = none. */
  declare allowedModels: CreationOptional<string[] | null>;
  declare rpm: CreationOptional<number | null>;
  declare tpm: CreationOptional<number | null>;
  declare budgetMicros: CreationOptional<number | null>;
  declare budgetPeriod: CreationOptional<BudgetPeriod | null>;
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
        allowedModels: { type: DataTypes.JSONB, allowNull: true },
        rpm: { type: DataTypes.INTEGER, allowNull: true },
        tpm: { type: DataTypes.INTEGER, allowNull: true },
        budgetMicros: { type: DataTypes.BIGINT, allowNull: true, get() { const v = this.getDataValue('budgetMicros'); return v === null || v === undefined ? null : Number(v); } },
        budgetPeriod: { type: DataTypes.TEXT, allowNull: true },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'memberships' },
    );
  }
}
