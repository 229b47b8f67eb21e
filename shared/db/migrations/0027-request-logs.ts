import { QueryInterface } from 'sequelize';

/**
 * The request log (issue 32): one row per request, metadata only (never prompt, output, audio,
 * transcript or file names), partitioned by day like `usage_events` (0026), with the same DEFAULT
 * partition. Written by the usage drainer from the usage outbox (shared/metering/request-log.ts);
 * (request_id, created_at) is unique, so a replayed entry is a no-op. Read newest first by org, key or
 * project (the Activity pages, GET /admin/v1/request-logs): each index is in the reads' exact order
 * (created_at, request_id descending), so a page stops after its rows instead of sorting every row of
 * the org (3 s for the newest 50 of an org with a million rows, without request_id in the index).
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`
    CREATE TABLE request_logs (
      created_at timestamptz NOT NULL,
      request_id varchar(255) NOT NULL,
      org_id uuid NOT NULL,
      project_id uuid,
      api_key_id uuid,
      user_id uuid,
      route varchar(255) NOT NULL,
      dialect varchar(64) NOT NULL,
      model varchar(255) NOT NULL DEFAULT '',
      deployment varchar(255),
      lane varchar(64),
      status smallint NOT NULL,
      error_code varchar(128),
      stream boolean NOT NULL DEFAULT false,
      attempts smallint NOT NULL DEFAULT 0,
      lane_ms integer,
      queue_ms integer,
      ttfb_ms integer,
      total_ms integer,
      input_tokens integer NOT NULL DEFAULT 0,
      output_tokens integer NOT NULL DEFAULT 0,
      cached_tokens integer,
      reasoning_tokens integer,
      units jsonb NOT NULL DEFAULT '{}',
      cost_micros numeric NOT NULL DEFAULT 0,
      trace_id varchar(64),
      CONSTRAINT request_logs_pkey PRIMARY KEY (request_id, created_at)
    ) PARTITION BY RANGE (created_at);
    CREATE TABLE request_logs_default PARTITION OF request_logs DEFAULT;
    CREATE INDEX request_logs_org_created ON request_logs (org_id, created_at DESC, request_id DESC);
    CREATE INDEX request_logs_key_created ON request_logs (api_key_id, created_at DESC, request_id DESC);
    CREATE INDEX request_logs_project_created ON request_logs (project_id, created_at DESC, request_id DESC);
    SELECT gw_ensure_day_partitions('request_logs', (now() AT TIME ZONE 'UTC')::date - 1, 9);`);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DROP TABLE IF EXISTS request_logs');
}
