import { DataTypes, Model as SModel, Sequelize, InferAttributes, InferCreationAttributes, CreationOptional } from 'sequelize';

export class User extends SModel<InferAttributes<User>, InferCreationAttributes<User>> {
  declare id: CreationOptional<string>;
  declare email: string;
  declare name: string | null;
  declare isPlatformAdmin: CreationOptional<boolean>;
  /** Soft deletion (management API `DELETE /users/:id`); a deleted user's platform keys are revoked. */
  declare deletedAt: CreationOptional<Date | null>;
  /** Per-user policies, e.g. `{ mcp_tools: { web_search: "deny" } }` (shared/policies/mcp-tools.ts). */
  declare policies: CreationOptional<Record<string, unknown>>;
  /** scrypt hash of the web sign-in password (shared/web/passwords.ts); null: no password set yet. */
  declare passwordHash: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    User.init(
      {
        id: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4, primaryKey: true },
        email: { type: DataTypes.STRING, allowNull: false, unique: true },
        name: { type: DataTypes.STRING, allowNull: true },
        isPlatformAdmin: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        deletedAt: { type: DataTypes.DATE, allowNull: true },
        policies: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
        passwordHash: { type: DataTypes.TEXT, allowNull: true, field: 'password_hash' },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'users' },
    );
  }
}
