import { QueryInterface } from 'sequelize';

/**
 * Whether callers may bring their own provider key to a provider (passthrough, docs/api.md): true,
 * false, or null for the default of its kind and preset (refused for the self-hosted presets, vllm
 * and ollama, whose upstream checks no key; allowed for the rest, whose vendor bills the key's account).
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE providers ADD COLUMN passthrough boolean');
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE providers DROP COLUMN passthrough');
}
