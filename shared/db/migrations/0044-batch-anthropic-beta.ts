import { QueryInterface } from 'sequelize';

/**
 * A Message Batch keeps the `anthropic-beta` header it was created with (Anthropic: every Messages
 * feature, beta features included, is available through Message Batches; the SDK's
 * `beta.messages.batches.create({betas})` sends them on the create): the runner sends each line with
 * it, as the synchronous `/v1/messages` passes it to an Anthropic-native upstream. Null: none.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE batches ADD COLUMN anthropic_beta text');
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE batches DROP COLUMN anthropic_beta');
}
