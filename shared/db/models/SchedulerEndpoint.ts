import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/** Scheduling settings of one queue (concurrency, fair-share priority step, waiting cap). */
export class SchedulerEndpoint extends SModel<InferAttributes<SchedulerEndpoint>, InferCreationAttributes<SchedulerEndpoint>> {
  declare id: CreationOptional<string>;
  declare queue: string;
  declare concurrency: number | null;
  declare priorityStep: number | null;
  declare maxWaiting: number | null;
  declare enabled: CreationOptional<boolean>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    SchedulerEndpoint.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        queue: { type: DataTypes.STRING(64), allowNull: false },
        concurrency: { type: DataTypes.INTEGER, allowNull: true },
        priorityStep: { type: DataTypes.INTEGER, allowNull: true },
        maxWaiting: { type: DataTypes.INTEGER, allowNull: true },
        enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'scheduler_endpoints' },
    );
  }
}
