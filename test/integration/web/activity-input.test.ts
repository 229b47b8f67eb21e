import crypto from 'crypto';
import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { usageSettled } from '../../helpers/usage';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { buildWebMember, dashboardAs, type WebClient } from '../../helpers/web-client';
import { appendRequestLog } from '../../../shared/metering/usage-outbox';
import { LOG_COLUMNS } from '../../../shared/metering/request-log-query';

/**
 * What the Activity page, its CSV export and GET /admin/v1/request-logs make of input the gateway
 * did not issue or a caller controls: a cell that is a formula is neutralised in the CSV, a cursor
 * not written by the page and a day that does not exist are 400s, never a 500 or a rolled-over date.
 */
describe('Activity: CSV cells, cursors and dates from outside', () => {
  let o: TestOrg;
  let web: WebClient;
  before(async () => {
    o = await buildOrg(env().redis);
    web = await dashboardAs(await buildWebMember(o.org.id, 'member'));
  });

  it('CSV: a model name that is a formula starting with -<digit> is prefixed; a negative number is not', async () => {
    const requestId = `req_csv_${crypto.randomBytes(6).toString('hex')}`;
    const model = "-2+3+cmd|' /C calc'!A0";
    await appendRequestLog(env().redis, { requestId, orgId: o.org.id, projectId: null, apiKeyId: o.keyId, model, lane: null, receivedAt: Date.now(),
      route: '/v1/chat/completions', dialect: 'openai-chat', userId: null, status: 404, errorCode: '-12', totalMs: 1 });
    await usageSettled();
    const csv = await web.get(`/dashboard/o/${o.org.slug}/activity.csv`);
    expect(csv.status).to.equal(200);
    const line = csv.text.split('\r\n').find((l) => l.includes(requestId))!.split(',');
    expect(line[LOG_COLUMNS.indexOf('model')]).to.equal(`'${model}`);
    expect(line[LOG_COLUMNS.indexOf('error_code')]).to.equal('-12');
  });

  const cursor = (at: string) => Buffer.from(`${at}|req_x`).toString('base64url');
  const foreign = ['2026', '1', 'x 5', '2026-11-27', '2026-02-31T10:00:00.000000Z', '2026-11-27T25:00:00.000000Z'];

  it('a cursor the page did not issue: 400 invalid_cursor on the page and the CSV; an issued one works', async () => {
    for (const at of foreign) {
      for (const path of ['activity', 'activity.csv']) {
        const r = await web.get(`/dashboard/o/${o.org.slug}/${path}?cursor=${cursor(at)}`);
        expect(r.status, `${path} ${at}`).to.equal(400);
        expect(r.text, `${path} ${at}`).to.include('invalid_cursor');
      }
    }
    const ok = await web.get(`/dashboard/o/${o.org.slug}/activity.csv?cursor=${cursor('2026-11-27T10:00:00.123456Z')}`);
    expect(ok.status).to.equal(200);
  });

  it('a hand-edited filter: the Activity page at 400 with the field marked and no rows; JSON and CSV get the error', async () => {
    for (const [q, field] of [['status=7xx', 'status'], ['key=not-an-id', 'key'], ['from=yesterday', 'from'], ['project=1', 'project']] as const) {
      const r = await web.get(`/dashboard/o/${o.org.slug}/activity?model=gpt&${q}`);
      expect(r.status, q).to.equal(400);
      expect(r.text, q).to.include('data-test="activity-filters"').and.not.include('data-test="error-page"');
      expect(r.text, q).to.include(`data-test="field-error-${field}"`).and.include('aria-invalid="true"');
      expect(r.text, q).to.include('value="gpt"').and.include('Mend the filter above');
      const json = await web.request('GET', `/dashboard/o/${o.org.slug}/activity?${q}`, { headers: { accept: 'application/json' } });
      expect(json.status, q).to.equal(400);
      expect(json.body.error.code, q).to.equal('invalid_request');
      expect(json.body.error.message, q).to.match(new RegExp(`^${field}: `));
      expect((await web.get(`/dashboard/o/${o.org.slug}/activity.csv?${q}`)).status, q).to.equal(400);
    }
  });

  // year 0 is a day JavaScript writes (0000-01-01) and PostgreSQL refuses ("date/time field value out of range"): a 500 before
  const outOfRange = ['from=0000-01-01', 'to=0000-12-31T10:00', 'from=0000-06-01T00:00:00'];

  it('a day that does not exist in from/to, or one PostgreSQL cannot hold: 400, on the page and in the admin API', async () => {
    for (const q of ['from=2026-02-31', 'to=2026-04-31T10:00', 'from=2026-01-01T24:00', ...outOfRange]) {
      const r = await web.get(`/dashboard/o/${o.org.slug}/activity?${q}`);
      expect(r.status, q).to.equal(400);
      expect((await web.get(`/dashboard/o/${o.org.slug}/activity.csv?${q}`)).status, q).to.equal(400);
    }
    expect((await web.get(`/dashboard/o/${o.org.slug}/activity?from=2024-02-29`)).status).to.equal(200);
    const admin = await startAdmin();
    try {
      const { key } = await buildPlatformKey(['stats:read']);
      for (const q of ['from=2026-02-31', ...outOfRange, '', 'to=+010000-01-01T00:00:00Z', 'from=-000001-01-01T00:00:00Z', ...foreign.map((at) => `cursor=${cursor(at)}`)]) {
        if (q === '') continue;
        const r = await adminCall(admin.url, key, 'GET', `/admin/v1/request-logs?org_id=${o.org.id}&${q}`);
        expect(r.status, q).to.equal(400);
        expect(r.body.error.code, q).to.equal(q.startsWith('cursor') ? 'invalid_cursor' : 'invalid_request');
        for (const path of ['/admin/v1/usage-stats']) {
          if (q.startsWith('cursor')) continue;
          const u = await adminCall(admin.url, key, 'GET', `${path}?${q}`);
          expect(u.status, `${path} ${q}`).to.equal(400);
        }
      }
    } finally {
      await admin.close();
    }
  });
});
