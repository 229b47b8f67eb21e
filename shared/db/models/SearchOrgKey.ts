import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/** An organization's own key for a search provider: encrypted at rest, never returned (only `last4`). */
export class SearchOrgKey extends SModel<InferAttributes<SearchOrgKey>, InferCreationAttributes<SearchOrgKey>> {
  declare id: CreationOptional<string>;
  declare orgId: string;
  declare provider: string;
  declare keyEncrypted: string;
  declare last4: string;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    SearchOrgKey.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        orgId: { type: DataTypes.UUID, allowNull: false },
        provider: { type: DataTypes.STRING, allowNull: false },
        keyEncrypted: { type: DataTypes.TEXT, allowNull: false },
        last4: { type: DataTypes.STRING(4), allowNull: false },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'search_org_keys' },
    );
  }
}
