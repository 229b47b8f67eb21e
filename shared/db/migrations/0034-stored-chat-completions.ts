import { QueryInterface } from 'sequelize';

/**
 * Chat completions created with `store: true` (OpenAI's stored completions: `GET/POST/DELETE
 * /v1/chat/completions/{id}`, the list, and `/messages`; docs/dialects.md). Keyed by the org and the
 * completion's id (an upstream's id is unique to it, not across organizations). `messages` are the
 * request's, listed by `/messages`; `metadata` is the caller's, filtered on by the list. The list
 * reads an org's rows by time; the clock's retention sweep by time alone (BRIN).
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`
    CREATE TABLE IF NOT EXISTS stored_chat_completions (
      org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      id varchar(128) NOT NULL,
      project_id uuid,
      api_key_id uuid,
      model varchar(255) NOT NULL,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      completion jsonb NOT NULL,
      messages jsonb NOT NULL DEFAULT '[]'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      seq bigserial NOT NULL,
      PRIMARY KEY (org_id, id)
    )`);
  await q.sequelize.query('CREATE INDEX IF NOT EXISTS stored_chat_completions_org_seq ON stored_chat_completions (org_id, seq)');
  await q.sequelize.query('CREATE INDEX IF NOT EXISTS stored_chat_completions_created_at ON stored_chat_completions USING brin (created_at)');
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DROP TABLE IF EXISTS stored_chat_completions');
}
