import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/** A web search provider; its API key is encrypted at rest and never returned. */
export class SearchProvider extends SModel<InferAttributes<SearchProvider>, InferCreationAttributes<SearchProvider>> {
  declare id: CreationOptional<string>;
  declare name: string;
  declare kind: string;
  declare baseUrl: string;
  declare enabled: CreationOptional<boolean>;
  declare priceMicros: CreationOptional<string>;
  /** Price of one page fetch (native `web_fetch`) in micro-dollars. */
  declare fetchPriceMicros: CreationOptional<string>;
  /** The platform default provider (used when the org names none). */
  declare isDefault: CreationOptional<boolean>;
  declare apiKeyEncrypted: string | null;
  declare config: CreationOptional<Record<string, unknown>>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    SearchProvider.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        name: { type: DataTypes.STRING, allowNull: false },
        kind: { type: DataTypes.STRING(32), allowNull: false },
        baseUrl: { type: DataTypes.STRING, allowNull: false },
        enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
        priceMicros: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
        fetchPriceMicros: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
        isDefault: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        apiKeyEncrypted: { type: DataTypes.TEXT, allowNull: true },
        config: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'search_providers' },
    );
  }
}
