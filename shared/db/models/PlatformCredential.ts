import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/** A provider's platform credential, AES-256-GCM encrypted (shared/crypto.ts); only a hint is ever shown. */
export class PlatformCredential extends SModel<InferAttributes<PlatformCredential>, InferCreationAttributes<PlatformCredential>> {
  declare id: CreationOptional<string>;
  declare providerId: string;
  declare label: string | null;
  declare secretEncrypted: string;
  declare secretHint: string;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    PlatformCredential.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        providerId: { type: DataTypes.UUID, allowNull: false },
        label: { type: DataTypes.STRING, allowNull: true },
        secretEncrypted: { type: DataTypes.TEXT, allowNull: false },
        secretHint: { type: DataTypes.STRING(8), allowNull: false },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'platform_credentials' },
    );
  }
}
