import type { BudgetPeriod } from './ApiKey';
import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

export class Project extends SModel<InferAttributes<Project>, InferCreationAttributes<Project>> {
  declare id: CreationOptional<string>;
  declare orgId: string;
  declare name: string;
  declare slug: string;
  /** Archived projects keep their history; their keys and paths stop working. */
  declare archivedAt: CreationOptional<Date | null>;
  /** Spending limit of all the project's keys together, micro-dollars per `budgetPeriod`; null = none. */
  declare budgetMicros: CreationOptional<number | null>;
  declare budgetPeriod: CreationOptional<BudgetPeriod | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    Project.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        orgId: { type: DataTypes.UUID, allowNull: false },
        name: { type: DataTypes.STRING, allowNull: false },
        slug: { type: DataTypes.STRING, allowNull: false },
        archivedAt: { type: DataTypes.DATE, allowNull: true, field: 'archived_at' },
        budgetMicros: { type: DataTypes.BIGINT, allowNull: true, get() { const v = this.getDataValue('budgetMicros'); return v === null || v === undefined ? null : Number(v); } },
        budgetPeriod: { type: DataTypes.TEXT, allowNull: true },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'projects' },
    );
  }
}
