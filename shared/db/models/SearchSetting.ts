import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/** An organization's web search settings: default provider, allowance, paid overage. */
export class SearchSetting extends SModel<InferAttributes<SearchSetting>, InferCreationAttributes<SearchSetting>> {
  declare id: CreationOptional<string>;
  declare orgId: string;
  declare defaultProvider: string | null;
  declare allowedProviders: CreationOptional<string[]>;
  /** Free searches per month; null inherits the plan's (`entitlements.web_search_allowance`). */
  declare monthlyAllowance: CreationOptional<number | null>;
  declare overageEnabled: CreationOptional<boolean>;
  /** The org's monthly limit on all searches (platform and own key); null = none. */
  declare overageMonthlyLimit: CreationOptional<number | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    SearchSetting.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        orgId: { type: DataTypes.UUID, allowNull: false },
        defaultProvider: { type: DataTypes.STRING, allowNull: true },
        allowedProviders: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
        monthlyAllowance: { type: DataTypes.INTEGER, allowNull: true },
        overageEnabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        overageMonthlyLimit: { type: DataTypes.INTEGER, allowNull: true },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'search_settings' },
    );
  }
}
