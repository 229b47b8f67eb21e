import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/** A management key (`svc_platform_…`): scopes `<family>:read|write`, stored as a SHA-256 hash, no expiry. */
export class PlatformKey extends SModel<InferAttributes<PlatformKey>, InferCreationAttributes<PlatformKey>> {
  declare id: CreationOptional<string>;
  declare userId: string;
  declare name: string | null;
  declare prefix: string;
  declare keyHash: string;
  declare scopes: CreationOptional<string[]>;
  declare revokedAt: Date | null;
  declare revokedReason: string | null;
  declare lastUsedAt: Date | null;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    PlatformKey.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        userId: { type: DataTypes.UUID, allowNull: false },
        name: { type: DataTypes.STRING, allowNull: true },
        prefix: { type: DataTypes.STRING(32), allowNull: false },
        keyHash: { type: DataTypes.STRING(64), allowNull: false },
        scopes: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
        revokedAt: { type: DataTypes.DATE, allowNull: true },
        revokedReason: { type: DataTypes.STRING(32), allowNull: true },
        lastUsedAt: { type: DataTypes.DATE, allowNull: true },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'platform_keys' },
    );
  }
}
