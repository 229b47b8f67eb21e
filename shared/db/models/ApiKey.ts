import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/** The window a spending limit counts over (UTC days and months). */
export type BudgetPeriod = 'day' | 'month' | 'total';

/** An inference key. Only the SHA-256 hash and a short visible prefix are stored. */
export class ApiKey extends SModel<InferAttributes<ApiKey>, InferCreationAttributes<ApiKey>> {
  declare id: CreationOptional<string>;
  declare orgId: string;
  declare projectId: string | null;
  declare userId: CreationOptional<string | null>;
  declare name: string | null;
  declare prefix: string;
  declare keyHash: string;
  declare revokedAt: Date | null;
  /** Public model ids this key may call (`-background` variants follow their base); null = all. */
  declare allowedModels: CreationOptional<string[] | null>;
  /** Requests and tokens per minute, across every pod; null = no limit. */
  declare rpm: CreationOptional<number | null>;
  declare tpm: CreationOptional<number | null>;
  /** Spending limit in micro-dollars per `budgetPeriod`; null = none. */
  declare budgetMicros: CreationOptional<number | null>;
  declare budgetPeriod: CreationOptional<BudgetPeriod | null>;
  declare expiresAt: CreationOptional<Date | null>;
  declare lastUsedAt: CreationOptional<Date | null>;
  /** The user who made the key (null: the CLI, the seed, or an operator without a user). */
  declare createdBy: CreationOptional<string | null>;
  /** After a rotation: the previous secret's hash, accepted until `previousExpiresAt`. */
  declare previousKeyHash: CreationOptional<string | null>;
  declare previousExpiresAt: CreationOptional<Date | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    ApiKey.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        orgId: { type: DataTypes.UUID, allowNull: false },
        projectId: { type: DataTypes.UUID, allowNull: true },
        userId: { type: DataTypes.UUID, allowNull: true },
        name: { type: DataTypes.STRING, allowNull: true },
        prefix: { type: DataTypes.STRING(24), allowNull: false },
        keyHash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
        revokedAt: { type: DataTypes.DATE, allowNull: true },
        allowedModels: { type: DataTypes.JSONB, allowNull: true },
        rpm: { type: DataTypes.INTEGER, allowNull: true },
        tpm: { type: DataTypes.INTEGER, allowNull: true },
        // bigint comes back from pg as a string; budgets stay far below 2^53 micro-dollars
        budgetMicros: { type: DataTypes.BIGINT, allowNull: true, get() { const v = this.getDataValue('budgetMicros'); return v === null || v === undefined ? null : Number(v); } },
        budgetPeriod: { type: DataTypes.TEXT, allowNull: true },
        expiresAt: { type: DataTypes.DATE, allowNull: true },
        lastUsedAt: { type: DataTypes.DATE, allowNull: true },
        createdBy: { type: DataTypes.UUID, allowNull: true },
        previousKeyHash: { type: DataTypes.STRING(64), allowNull: true },
        previousExpiresAt: { type: DataTypes.DATE, allowNull: true },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'api_keys' },
    );
  }
}
