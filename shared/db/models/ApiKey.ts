import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

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
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'api_keys' },
    );
  }
}
