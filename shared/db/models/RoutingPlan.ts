import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/**
 * A routing plan is an org's named entry point: `/r/{routing_plan_id}/v1/...` authenticates with the
 * key sent in the headers, which must belong to the plan's org, and attributes to the plan's project.
 */
export class RoutingPlan extends SModel<InferAttributes<RoutingPlan>, InferCreationAttributes<RoutingPlan>> {
  declare id: CreationOptional<string>;
  declare orgId: string;
  declare projectId: string | null;
  declare name: string;
  /** Optional public-id aliases: `{ "fast": "sim-chat" }`. */
  declare modelMap: CreationOptional<Record<string, string>>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    RoutingPlan.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        orgId: { type: DataTypes.UUID, allowNull: false },
        projectId: { type: DataTypes.UUID, allowNull: true },
        name: { type: DataTypes.STRING, allowNull: false },
        modelMap: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'routing_plans' },
    );
  }
}
