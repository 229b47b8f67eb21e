import crypto from 'crypto';
import { expect } from 'chai';
import { QueryTypes, Sequelize } from 'sequelize';
import { migrator } from '../../../shared/db/migrate';
import { scratchDatabase } from '../../helpers/scratch-db';

/** Migration 0026 turns an existing usage_events into a day-partitioned table and keeps every row. */
describe('operations: migrating usage_events to day partitions keeps its rows', function () {
  this.timeout(120_000);
  const scratch = scratchDatabase('partitions');
  let sequelize: Sequelize;
  before(() => {
    sequelize = scratch.sequelize();
  });

  it('moves rows of old days and of today into their partitions, and the request id stays unique per time', async () => {
    await migrator(sequelize).up({ to: '0025-invite-redemption' });
    const org = crypto.randomUUID();
    const day = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
    const at = [`${day(40)}T23:59:59.999Z`, `${day(10)}T00:00:00Z`, new Date().toISOString()];
    for (const [i, t] of at.entries()) {
      await sequelize.query(
        `INSERT INTO usage_events (id, request_id, org_id, model, modality, lane, input_tokens, output_tokens, units, passthrough, deployment, created_at)
         VALUES (gen_random_uuid(), :rid, :org, 'sim-chat', 'chat', 'interactive', :i, 2, '{"cost_micros": 3}', false, 'd1', :t)`,
        { replacements: { rid: `req_mig_${i}`, org, i: i + 1, t } },
      );
    }
    await migrator(sequelize).up();
    const rows = await sequelize.query<{ request_id: string; part: string; input_tokens: number; units: Record<string, number>; deployment: string }>(
      `SELECT request_id, tableoid::regclass::text AS part, input_tokens, units, deployment FROM usage_events WHERE org_id = :org ORDER BY created_at`,
      { type: QueryTypes.SELECT, replacements: { org } },
    );
    const part = (d: string) => `usage_events_p${d.replace(/-/g, '')}`;
    expect(rows.map((r) => [r.request_id, r.part, r.input_tokens])).to.deep.equal([
      ['req_mig_0', part(day(40)), 1],
      ['req_mig_1', part(day(10)), 2],
      ['req_mig_2', part(day(0)), 3],
    ]);
    expect(rows[0]).to.deep.include({ units: { cost_micros: 3 }, deployment: 'd1' });
    const [{ kind }] = await sequelize.query<{ kind: string }>(`SELECT relkind AS kind FROM pg_class WHERE relname = 'usage_events'`, { type: QueryTypes.SELECT });
    expect(kind, 'partitioned').to.equal('p');
    // partitions exist a week ahead, for both tables
    const ahead = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10).replace(/-/g, '');
    for (const t of ['usage_events', 'request_logs']) {
      const [{ r }] = await sequelize.query<{ r: string | null }>(`SELECT to_regclass(:n)::text AS r`, { type: QueryTypes.SELECT, replacements: { n: `${t}_p${ahead}` } });
      expect(r, `${t}_p${ahead}`).to.equal(`${t}_p${ahead}`);
    }
    // the old unique request id is now (request_id, created_at)
    const dup = sequelize.query(`INSERT INTO usage_events (id, request_id, org_id, model, modality, created_at) SELECT gen_random_uuid(), request_id, org_id, model, modality, created_at FROM usage_events WHERE request_id = 'req_mig_1'`);
    await dup.then(() => expect.fail('a duplicate was accepted'), (err: { parent?: { code?: string } }) => expect(err.parent?.code).to.equal('23505'));
  });
});
