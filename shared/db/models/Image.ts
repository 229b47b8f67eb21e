import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

export type ImageSource = 'generation' | 'edit' | 'upload';
export type ImageFormat = 'png' | 'jpeg' | 'webp';

/**
 * A stored image: its bytes live in image storage under `storageKey`; the row is only ever read by
 * the owning org, and only before `expiresAt` (the id stops resolving then, even before the sweep).
 */
export class Image extends SModel<InferAttributes<Image>, InferCreationAttributes<Image>> {
  declare id: string;
  declare orgId: string;
  declare projectId: string | null;
  declare apiKeyId: string | null;
  declare requestId: string;
  declare source: ImageSource;
  declare model: string | null;
  declare format: ImageFormat;
  declare width: number;
  declare height: number;
  declare bytes: number;
  declare storageKey: string;
  declare sourceImageIds: CreationOptional<string[]>;
  declare seed: number | null;
  declare createdAt: Date;
  declare expiresAt: Date;

  static initModel(sequelize: Sequelize): void {
    Image.init(
      {
        id: { type: DataTypes.STRING(64), primaryKey: true },
        orgId: { type: DataTypes.UUID, allowNull: false },
        projectId: { type: DataTypes.UUID, allowNull: true },
        apiKeyId: { type: DataTypes.UUID, allowNull: true },
        requestId: { type: DataTypes.STRING, allowNull: false },
        source: { type: DataTypes.STRING(16), allowNull: false },
        model: { type: DataTypes.STRING, allowNull: true },
        format: { type: DataTypes.STRING(8), allowNull: false },
        width: { type: DataTypes.INTEGER, allowNull: false },
        height: { type: DataTypes.INTEGER, allowNull: false },
        bytes: { type: DataTypes.INTEGER, allowNull: false },
        storageKey: { type: DataTypes.STRING, allowNull: false },
        sourceImageIds: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
        seed: {
          type: DataTypes.BIGINT,
          allowNull: true,
          get(this: Image) {
            const v = this.getDataValue('seed') as unknown;
            return v === null || v === undefined ? null : Number(v);
          },
        },
        createdAt: { type: DataTypes.DATE, allowNull: false },
        expiresAt: { type: DataTypes.DATE, allowNull: false },
      },
      { sequelize, tableName: 'images', timestamps: false },
    );
  }
}
