import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';
import type { Entitlements, LaneLimits } from './Plan';

export class Organization extends SModel<InferAttributes<Organization>, InferCreationAttributes<Organization>> {
  declare id: CreationOptional<string>;
  declare name: string;
  declare slug: string;
  declare planId: string | null;
  /** Overrides the plan's lane counts, key by key. */
  declare laneOverrides: CreationOptional<LaneLimits>;
  /** Overrides the plan's entitlements, key by key. */
  declare entitlements: CreationOptional<Entitlements>;
  /** Per-feature policies (audio, systemone, tools, ...), owned by later issues. */
  declare policies: CreationOptional<Record<string, unknown>>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    Organization.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        name: { type: DataTypes.STRING, allowNull: false },
        slug: { type: DataTypes.STRING, allowNull: false, unique: true },
        planId: { type: DataTypes.UUID, allowNull: true },
        laneOverrides: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
        entitlements: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
        policies: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'organizations' },
    );
  }
}
