import { QueryInterface } from 'sequelize';

/**
 * OpenAI's Conversations API (`/v1/conversations`, docs/dialects.md): a conversation of an org, its
 * metadata, and its items in the order they were added (`seq`), each a Responses item with an id unique
 * within the conversation. A response made with `conversation` reads its items as history and adds its
 * input and output items after it completes. Deleting a conversation deletes its items.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`
    CREATE TABLE IF NOT EXISTS conversations (
      org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      id varchar(128) NOT NULL,
      project_id uuid,
      api_key_id uuid,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (org_id, id)
    )`);
  await q.sequelize.query(`
    CREATE TABLE IF NOT EXISTS conversation_items (
      org_id uuid NOT NULL,
      conversation_id varchar(128) NOT NULL,
      id varchar(128) NOT NULL,
      item jsonb NOT NULL,
      seq bigserial NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (org_id, conversation_id, id),
      FOREIGN KEY (org_id, conversation_id) REFERENCES conversations (org_id, id) ON DELETE CASCADE
    )`);
  await q.sequelize.query('CREATE INDEX IF NOT EXISTS conversation_items_order ON conversation_items (org_id, conversation_id, seq)');
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DROP TABLE IF EXISTS conversation_items');
  await q.sequelize.query('DROP TABLE IF EXISTS conversations');
}
