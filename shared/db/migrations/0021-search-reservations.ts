import { QueryInterface } from 'sequelize';

/**
 * Searches reserved and not yet settled (issue 27): the search gate counts them in Redis at once,
 * the ledger only when they settle. When the period counters vanish (a failover to a lagging
 * replica) they are rebuilt from the ledger plus these rows, so in-flight searches are not handed
 * out twice. A row goes when its search settles (in the same statement as its ledger row) or is
 * given back; `expires_at` (its deadline and a margin) bounds what a crashed pod leaves behind.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`
    CREATE TABLE search_reservations (
      request_id varchar(255) PRIMARY KEY,
      org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      user_id uuid NULL,
      period char(7) NOT NULL,
      key_source varchar(16) NOT NULL,
      expires_at timestamptz NOT NULL
    )`);
  await q.sequelize.query('CREATE INDEX search_reservations_org_period ON search_reservations (org_id, period)');
}

export async function down(q: QueryInterface): Promise<void> {
  await q.dropTable('search_reservations');
}
