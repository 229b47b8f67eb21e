import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/**
 * Append-only usage ledger. `requestId` is unique, so writing an event is idempotent:
 * a retried job or a replayed write never counts twice.
 */
export class UsageEvent extends SModel<InferAttributes<UsageEvent>, InferCreationAttributes<UsageEvent>> {
  declare id: CreationOptional<string>;
  declare requestId: string;
  declare orgId: string;
  declare projectId: string | null;
  declare apiKeyId: string | null;
  declare model: string;
  declare modality: string;
  declare lane: string | null;
  declare inputTokens: CreationOptional<number>;
  declare outputTokens: CreationOptional<number>;
  /** Other metered units: `audio_duration_ms`, `images`, `search_units`, ... */
  declare units: CreationOptional<Record<string, number>>;
  /** true when the caller paid the upstream with its own key (passthrough). */
  declare passthrough: CreationOptional<boolean>;
  /** The model pool deployment that served the request (chat-style requests). */
  declare deployment: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    UsageEvent.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        requestId: { type: DataTypes.STRING, allowNull: false, unique: true },
        orgId: { type: DataTypes.UUID, allowNull: false },
        projectId: { type: DataTypes.UUID, allowNull: true },
        apiKeyId: { type: DataTypes.UUID, allowNull: true },
        model: { type: DataTypes.STRING, allowNull: false },
        modality: { type: DataTypes.STRING, allowNull: false },
        lane: { type: DataTypes.STRING, allowNull: true },
        inputTokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        outputTokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        units: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
        passthrough: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        deployment: { type: DataTypes.STRING, allowNull: true },
        createdAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'usage_events', updatedAt: false },
    );
  }
}
