import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/** The search usage ledger: one row per settled search or fetch. */
export class SearchUsage extends SModel<InferAttributes<SearchUsage>, InferCreationAttributes<SearchUsage>> {
  declare id: CreationOptional<string>;
  declare requestId: string;
  declare orgId: string;
  declare userId: string | null;
  declare apiKeyId: string | null;
  declare projectId: string | null;
  /** UTC month, `YYYY-MM`. */
  declare period: string;
  declare kind: 'search' | 'fetch';
  declare provider: string;
  declare keySource: 'platform' | 'own';
  declare chargeClass: 'allowance' | 'overage' | 'own_key';
  declare priceMicros: string | number;
  declare createdAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    SearchUsage.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        requestId: { type: DataTypes.STRING, allowNull: false, unique: true },
        orgId: { type: DataTypes.UUID, allowNull: false },
        userId: { type: DataTypes.UUID, allowNull: true },
        apiKeyId: { type: DataTypes.UUID, allowNull: true },
        projectId: { type: DataTypes.UUID, allowNull: true },
        period: { type: DataTypes.CHAR(7), allowNull: false },
        kind: { type: DataTypes.STRING(16), allowNull: false },
        provider: { type: DataTypes.STRING, allowNull: false },
        keySource: { type: DataTypes.STRING(16), allowNull: false },
        chargeClass: { type: DataTypes.STRING(16), allowNull: false },
        priceMicros: { type: DataTypes.BIGINT, allowNull: false },
        createdAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'search_usage', updatedAt: false },
    );
  }
}
