import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/** The wire family an adapter speaks: one folder under workers/providers per kind. */
export const PROVIDER_KINDS = ['openai', 'anthropic', 'cohere', 'azure', 'gemini', 'bedrock'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/**
 * A provider's non-secret settings per kind (docs/providers.md): Azure's `api_version`, Bedrock's
 * `region`, an OpenAI-compatible service's `preset`. Secrets never go here (apiKeyEncrypted).
 */
export interface ProviderSettings {
  api_version?: string;
  region?: string;
  preset?: string;
}

export class Provider extends SModel<InferAttributes<Provider>, InferCreationAttributes<Provider>> {
  declare id: CreationOptional<string>;
  declare name: string;
  declare kind: ProviderKind;
  declare baseUrl: string;
  /** AES-256-GCM ciphertext of the platform credential (see shared/crypto.ts); never returned. */
  declare apiKeyEncrypted: string | null;
  declare settings: CreationOptional<ProviderSettings>;
  /** Callers may bring their own provider key (passthrough); null: the default of its kind and preset (shared/catalog/passthrough.ts). */
  declare passthrough: CreationOptional<boolean | null>;
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
        settings: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
        passthrough: { type: DataTypes.BOOLEAN, allowNull: true, defaultValue: null },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'providers' },
    );
  }
}
