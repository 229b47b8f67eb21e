import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/** One write on the management API (or a platform-key event): who, what, when, outcome. Never a secret. */
export class AuditLog extends SModel<InferAttributes<AuditLog>, InferCreationAttributes<AuditLog>> {
  declare id: CreationOptional<string>;
  declare actorType: string;
  declare actorId: string | null;
  declare actorLabel: string | null;
  declare method: string;
  declare path: string;
  declare family: string | null;
  declare targetId: string | null;
  declare status: number;
  declare outcome: string;
  declare requestId: string | null;
  declare fields: CreationOptional<string[]>;
  declare createdAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    AuditLog.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        actorType: { type: DataTypes.STRING(16), allowNull: false },
        actorId: { type: DataTypes.UUID, allowNull: true },
        actorLabel: { type: DataTypes.STRING, allowNull: true },
        method: { type: DataTypes.STRING(8), allowNull: false },
        path: { type: DataTypes.STRING(512), allowNull: false },
        family: { type: DataTypes.STRING(32), allowNull: true },
        targetId: { type: DataTypes.STRING, allowNull: true },
        status: { type: DataTypes.INTEGER, allowNull: false },
        outcome: { type: DataTypes.STRING(16), allowNull: false },
        requestId: { type: DataTypes.STRING, allowNull: true },
        fields: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
        createdAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'audit_logs', updatedAt: false },
    );
  }
}
