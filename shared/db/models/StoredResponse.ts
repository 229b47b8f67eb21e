import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/**
 * A response of the responses dialect, kept so that a follow-up can name it in
 * `previous_response_id`. `conversation` is the canonical chat history up to and including this
 * response's assistant turn (instructions excluded); `inputItems` the request's input items, each
 * with an id (input_items list). Only ever read by the owning org.
 */
export class StoredResponse extends SModel<InferAttributes<StoredResponse>, InferCreationAttributes<StoredResponse>> {
  declare id: string;
  declare orgId: string;
  declare projectId: string | null;
  declare apiKeyId: string | null;
  declare model: string;
  declare conversation: unknown[];
  declare response: Record<string, unknown>;
  declare inputItems: CreationOptional<Array<Record<string, unknown>>>;
  /** The settings `configuration_update` items left in effect after it (its history's and its input's), for a follow-up; null: none. */
  declare configuration: CreationOptional<Record<string, unknown> | null>;
  declare createdAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    StoredResponse.init(
      {
        id: { type: DataTypes.STRING(64), primaryKey: true },
        orgId: { type: DataTypes.UUID, allowNull: false },
        projectId: { type: DataTypes.UUID, allowNull: true },
        apiKeyId: { type: DataTypes.UUID, allowNull: true },
        model: { type: DataTypes.STRING, allowNull: false },
        conversation: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
        response: { type: DataTypes.JSONB, allowNull: false },
        inputItems: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
        configuration: { type: DataTypes.JSONB, allowNull: true },
        createdAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'stored_responses', updatedAt: false },
    );
  }
}
