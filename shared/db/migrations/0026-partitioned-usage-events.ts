import { QueryInterface } from 'sequelize';

/**
 * `usage_events` becomes a table partitioned by day (issue 32, "Tables that stay fast"). Its rows are
 * kept: the old table is renamed, a partitioned one with the same columns takes its name, a partition
 * is created for every day that has rows (and for yesterday … today + 7), the rows are copied, and the
 * old table is dropped. Every reader (rollups, usage pages, ledger spend, admin stats) keeps its SQL.
 *
 * A partitioned table's unique keys must hold the partition key, so the request id is unique per
 * (request_id, created_at); the drainer gives each event a timestamp fixed when the event was made,
 * so a replayed outbox entry still conflicts (shared/metering/usage.ts). `gw_ensure_day_partitions`
 * creates missing day partitions (the clock calls it ahead of time; shared/db/partitions.ts); rows of
 * a day without one land in the DEFAULT partition rather than being refused.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`
    CREATE OR REPLACE FUNCTION gw_ensure_day_partitions(parent text, first_day date, days integer) RETURNS integer
    LANGUAGE plpgsql AS $fn$
    DECLARE
      d date;
      made integer := 0;
      child text;
    BEGIN
      FOR i IN 0 .. days - 1 LOOP
        d := first_day + i;
        child := parent || '_p' || to_char(d, 'YYYYMMDD');
        IF to_regclass(child) IS NULL THEN
          BEGIN
            EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                           child, parent, (d::timestamp AT TIME ZONE 'UTC'), ((d + 1)::timestamp AT TIME ZONE 'UTC'));
            made := made + 1;
          EXCEPTION
            -- another process made it first, or the DEFAULT partition already holds rows of that day
            WHEN duplicate_table OR unique_violation OR check_violation THEN NULL;
          END;
        END IF;
      END LOOP;
      RETURN made;
    END
    $fn$`);

  await q.sequelize.query(`
    ALTER TABLE usage_events RENAME TO usage_events_unpartitioned;
    CREATE TABLE usage_events (
      id uuid NOT NULL,
      request_id varchar(255) NOT NULL,
      org_id uuid NOT NULL,
      project_id uuid,
      api_key_id uuid,
      model varchar(255) NOT NULL,
      modality varchar(255) NOT NULL,
      lane varchar(255),
      input_tokens integer NOT NULL DEFAULT 0,
      output_tokens integer NOT NULL DEFAULT 0,
      units jsonb NOT NULL DEFAULT '{}',
      passthrough boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL,
      deployment text,
      CONSTRAINT usage_events_partitioned_pkey PRIMARY KEY (id, created_at),
      CONSTRAINT usage_events_request_at_key UNIQUE (request_id, created_at)
    ) PARTITION BY RANGE (created_at);
    CREATE TABLE usage_events_default PARTITION OF usage_events DEFAULT;`);
  await q.sequelize.query(`
    SELECT gw_ensure_day_partitions('usage_events', lo, (hi - lo) + 1)
      FROM (SELECT least(coalesce(min(created_at AT TIME ZONE 'UTC')::date, current_date), (now() AT TIME ZONE 'UTC')::date - 1) AS lo,
                   (now() AT TIME ZONE 'UTC')::date + 7 AS hi
              FROM usage_events_unpartitioned) r`);
  await q.sequelize.query(`
    INSERT INTO usage_events (id, request_id, org_id, project_id, api_key_id, model, modality, lane, input_tokens, output_tokens, units, passthrough, created_at, deployment)
    SELECT id, request_id, org_id, project_id, api_key_id, model, modality, lane, input_tokens, output_tokens, units, passthrough, created_at, deployment
      FROM usage_events_unpartitioned;
    DROP TABLE usage_events_unpartitioned;
    CREATE INDEX usage_events_org_id_created_at ON usage_events (org_id, created_at);
    CREATE INDEX usage_events_created_at ON usage_events (created_at);
    CREATE INDEX usage_events_api_key_created ON usage_events (api_key_id, created_at);
    CREATE INDEX usage_events_project_created ON usage_events (project_id, created_at);`);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`
    CREATE TABLE usage_events_plain (LIKE usage_events INCLUDING DEFAULTS);
    INSERT INTO usage_events_plain SELECT * FROM usage_events;
    DROP TABLE usage_events;
    ALTER TABLE usage_events_plain RENAME TO usage_events;
    ALTER TABLE usage_events ADD PRIMARY KEY (id);
    CREATE UNIQUE INDEX usage_events_request_id_key ON usage_events (request_id);
    CREATE INDEX usage_events_org_id_created_at ON usage_events (org_id, created_at);
    CREATE INDEX usage_events_created_at ON usage_events (created_at);
    CREATE INDEX usage_events_api_key_created ON usage_events (api_key_id, created_at);
    CREATE INDEX usage_events_project_created ON usage_events (project_id, created_at);
    DROP FUNCTION IF EXISTS gw_ensure_day_partitions(text, date, integer);`);
}
