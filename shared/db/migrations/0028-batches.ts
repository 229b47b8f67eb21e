import { QueryInterface } from 'sequelize';

/**
 * Files and batches (issue 33): uploaded JSONL files (`purpose=batch`) and the batches' outputs, the
 * batches of both dialects (OpenAI Batch API, Anthropic Message Batches) and their lines. Progress
 * lives here, not in Redis: a line is claimed and its result recorded with conditional updates, so a
 * batch survives any process or Redis restart (docs/batches.md).
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`
    CREATE TABLE batch_files (
      id varchar(64) PRIMARY KEY,
      org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      project_id uuid,
      api_key_id uuid,
      purpose varchar(32) NOT NULL,
      filename varchar(255) NOT NULL,
      bytes integer NOT NULL,
      storage_key varchar(255) NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz
    );
    CREATE INDEX batch_files_org ON batch_files (org_id, created_at DESC, id DESC);
    CREATE INDEX batch_files_expires ON batch_files (expires_at);

    CREATE TABLE batches (
      id varchar(64) PRIMARY KEY,
      dialect varchar(16) NOT NULL,
      org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      project_id uuid,
      api_key_id uuid,
      key_hash varchar(64) NOT NULL,
      routing_plan_id uuid,
      endpoint varchar(64) NOT NULL,
      input_file_id varchar(64),
      completion_window varchar(8) NOT NULL DEFAULT '24h',
      metadata jsonb,
      status varchar(16) NOT NULL,
      errors jsonb,
      price_multiplier numeric NOT NULL,
      total integer NOT NULL DEFAULT 0,
      output_file_id varchar(64),
      error_file_id varchar(64),
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      in_progress_at timestamptz,
      finalizing_at timestamptz,
      completed_at timestamptz,
      failed_at timestamptz,
      expired_at timestamptz,
      cancelling_at timestamptz,
      cancelled_at timestamptz,
      deleted_at timestamptz
    );
    CREATE INDEX batches_org ON batches (org_id, dialect, created_at DESC, id DESC);
    CREATE INDEX batches_active ON batches (status) WHERE status IN ('validating', 'in_progress', 'finalizing', 'cancelling');

    CREATE TABLE batch_lines (
      batch_id varchar(64) NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
      idx integer NOT NULL,
      custom_id varchar(512) NOT NULL,
      body jsonb NOT NULL,
      state varchar(16) NOT NULL DEFAULT 'pending',
      attempt integer NOT NULL DEFAULT 0,
      claimed_by varchar(128),
      claimed_at timestamptz,
      status_code integer,
      request_id varchar(128),
      result jsonb,
      finished_at timestamptz,
      PRIMARY KEY (batch_id, idx)
    );
    CREATE INDEX batch_lines_todo ON batch_lines (batch_id, state, idx);
  `);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DROP TABLE batch_lines; DROP TABLE batches; DROP TABLE batch_files;');
}
