import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

/** A named tokenizer profile: a model's `tokenizer` names one; `encoding` is a gpt-tokenizer encoding. */
export class TokenizerProfile extends SModel<InferAttributes<TokenizerProfile>, InferCreationAttributes<TokenizerProfile>> {
  declare id: CreationOptional<string>;
  declare name: string;
  declare encoding: string;
  declare description: string | null;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    TokenizerProfile.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        name: { type: DataTypes.STRING, allowNull: false },
        encoding: { type: DataTypes.STRING(32), allowNull: false },
        description: { type: DataTypes.STRING, allowNull: true },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'tokenizer_profiles' },
    );
  }
}
