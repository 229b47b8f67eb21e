import type { DeploymentSpec } from '../../catalog/deployments';
import type { StoredPrices } from '../../catalog/tier-prices';
import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

export interface Capabilities {
  chat?: boolean;
  embeddings?: boolean;
  rerank?: boolean;
  image_generation?: boolean;
  transcription?: boolean;
  vision?: boolean;
  decision?: boolean;
  /** Fallback eligibility: `false` means the model cannot take requests with tools / a JSON schema. */
  tools?: boolean;
  json_schema?: boolean;
}

/** A catalog entry: the public id callers use, and where and how it is served. */
export class Model extends SModel<InferAttributes<Model>, InferCreationAttributes<Model>> {
  declare id: CreationOptional<string>;
  declare publicId: string;
  declare providerId: string;
  declare upstreamName: string;
  declare displayName: string | null;
  declare capabilities: Capabilities;
  declare contextWindow: number | null;
  declare maxOutputTokens: number | null;
  /** Task limits: embeddings max batch, image sizes, decision caps, ... */
  declare limits: CreationOptional<Record<string, unknown>>;
  /** Per-task config, e.g. `audio_config`, `decision_config`. */
  declare config: CreationOptional<Record<string, unknown>>;
  /**
   * Prices per unit in micro-dollars, e.g. `{ input_token: 0.5, output_token: 1.5 }`, and on a chat
   * model `service_tiers`, an object (shared/catalog/tier-prices.ts): read unit prices through splitPrices.
   */
  declare prices: CreationOptional<StoredPrices>;
  /** Tokenizer profile name (gpt-tokenizer encoding), e.g. `o200k_base`. */
  declare tokenizer: CreationOptional<string>;
  /** The model's pool (shared/catalog/deployments.ts); the first deployment mirrors providerId/upstreamName. */
  declare deployments: CreationOptional<DeploymentSpec[]>;
  /** Public ids of fallback models, tried in order when the pool fails retryably. */
  declare fallbacks: CreationOptional<string[]>;
  declare enabled: CreationOptional<boolean>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    Model.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        publicId: { type: DataTypes.STRING, allowNull: false, unique: true },
        providerId: { type: DataTypes.UUID, allowNull: false },
        upstreamName: { type: DataTypes.STRING, allowNull: false },
        displayName: { type: DataTypes.STRING, allowNull: true },
        capabilities: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
        contextWindow: { type: DataTypes.INTEGER, allowNull: true },
        maxOutputTokens: { type: DataTypes.INTEGER, allowNull: true },
        limits: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
        config: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
        prices: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
        tokenizer: { type: DataTypes.STRING, allowNull: false, defaultValue: 'o200k_base' },
        deployments: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
        fallbacks: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
        enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'models' },
    );
  }
}
