import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/** Worker settings of a pool and lane serving a set of models (operator-tunable). */
export class ModelPool extends SModel<InferAttributes<ModelPool>, InferCreationAttributes<ModelPool>> {
  declare id: CreationOptional<string>;
  declare name: string;
  declare pool: string;
  declare lane: string;
  declare concurrency: number;
  declare models: CreationOptional<string[]>;
  declare settings: CreationOptional<Record<string, unknown>>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    ModelPool.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        name: { type: DataTypes.STRING, allowNull: false },
        pool: { type: DataTypes.STRING(32), allowNull: false },
        lane: { type: DataTypes.STRING(32), allowNull: false },
        concurrency: { type: DataTypes.INTEGER, allowNull: false },
        models: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
        settings: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'model_pools' },
    );
  }
}
