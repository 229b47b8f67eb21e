import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/** Lane counts keyed `<pool>:<lane>`, e.g. `{ "chat:interactive": 8, "chat:background": 4 }`. */
export type LaneLimits = Record<string, number>;
/** Feature entitlements, e.g. `{ background: true }`. */
export type Entitlements = Record<string, unknown>;

export class Plan extends SModel<InferAttributes<Plan>, InferCreationAttributes<Plan>> {
  declare id: CreationOptional<string>;
  declare name: string;
  declare laneLimits: LaneLimits;
  declare entitlements: Entitlements;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    Plan.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        name: { type: DataTypes.STRING, allowNull: false, unique: true },
        laneLimits: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
        entitlements: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'plans' },
    );
  }
}
