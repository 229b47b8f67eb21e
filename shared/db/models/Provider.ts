import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/** The wire family an adapter speaks: one folder under workers/providers per kind. */
export type ProviderKind = 'openai' | 'anthropic' | 'cohere';

export class Provider extends SModel<InferAttributes<Provider>, InferCreationAttributes<Provider>> {
  declare id: CreationOptional<string>;
  declare name: string;
  declare kind: ProviderKind;
  declare baseUrl: string;
  /** AES-256-GCM ciphertext of the platform credential (see shared/crypto.ts); never returned. */
  declare apiKeyEncrypted: string | null;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    Provider.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        name: { type: DataTypes.STRING, allowNull: false, unique: true },
        kind: { type: DataTypes.STRING, allowNull: false },
        baseUrl: { type: DataTypes.STRING, allowNull: false },
        apiKeyEncrypted: { type: DataTypes.TEXT, allowNull: true },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'providers' },
    );
  }
}
