import crypto from 'crypto';
import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { buildWebMember, consoleAs, dashboardAs, type WebClient } from '../../helpers/web-client';
import { ApiKey, Project } from '../../../shared/db/models';
import { createApiKey } from '../../../shared/tenancy/ops';
import { appendRequestLog } from '../../../shared/metering/usage-outbox';
import { LOG_COLUMNS } from '../../../shared/metering/request-log-query';
import { PAGE_SIZE } from '../../../api/web/activity';

/** The request ids of an Activity page's table, top to bottom. */
const pageIds = (text: string) => [...(text.split('data-test="activity"')[1] ?? '').matchAll(/<tr data-request-id="([^"]+)"/g)].map((m) => m[1]);
const older = (text: string) => /data-test="activity-older" href="([^"]+)"|href="([^"]+)" data-test="activity-older"/.exec(text.replace(/&amp;/g, '&'));
const olderHref = (text: string) => { const m = older(text); return m ? (m[1] ?? m[2]) : undefined; };
const csvHref = (text: string) => /href="([^"]+)" data-test="activity-csv"/.exec(text)![1].replace(/&amp;/g, '&');

/** A CSV document's rows (RFC 4180: quoted cells may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; } else if (c === '"') quoted = false; else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(cell); cell = ''; } else if (c === '\r' && text[i + 1] === '\n') { row.push(cell); rows.push(row); row = []; cell = ''; i++; } else cell += c;
  }
  return rows;
}

describe('Activity: the request log in the dashboard, the console and GET /admin/v1/request-logs', () => {
  let o: TestOrg;
  let bound: { key: string; id: string };
  let project: Project;
  let web: WebClient;
  let okIds: string[];
  let failedId: string;
  let fillerIds: string[];
  before(async () => {
    o = await buildOrg(env().redis);
    project = await Project.create({ orgId: o.org.id, name: 'Activity project', slug: 'activity' });
    bound = await createApiKey(env().redis, { orgId: o.org.id, projectId: project.id, name: 'bound key' });
    resetSim();
    // older traffic first: filler rows an hour ago (log-only entries, as a pod writes them), then real requests
    const hourAgo = Date.now() - 3_600_000;
    fillerIds = [];
    for (let i = 0; i < PAGE_SIZE + 5; i++) {
      const requestId = `req_fill_${crypto.randomBytes(6).toString('hex')}`;
      fillerIds.push(requestId);
      await appendRequestLog(env().redis, {
        requestId, orgId: o.org.id, projectId: null, apiKeyId: o.keyId, model: 'sim-chat', lane: null, receivedAt: hourAgo + i,
        route: '/v1/chat/completions', dialect: 'openai-chat', userId: null, status: 429, errorCode: 'rate_limited, "quoted"', totalMs: 1,
      });
    }
    okIds = [];
    for (const key of [o.key, bound.key]) {
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'activity' }] } });
      expect(r.status).to.equal(200);
      okIds.push(r.headers.get('x-service-request-id')!);
    }
    const bad = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat' } });
    expect(bad.status).to.equal(400);
    failedId = bad.headers.get('x-service-request-id')!;
    await usageSettled();
    web = await dashboardAs(await buildWebMember(o.org.id, 'member'));
  });

  it('dashboard: newest first, filters by key, project, model, status and time; each row opens its details', async () => {
    const all = await web.get(`/dashboard/o/${o.org.slug}/activity`);
    expect(all.status, all.text.slice(0, 300)).to.equal(200);
    const ids = pageIds(all.text);
    expect(ids.slice(0, 3)).to.deep.equal([failedId, okIds[1], okIds[0]]);
    expect(ids).to.have.length(PAGE_SIZE);
    expect(all.text).to.include('href="/dashboard/o/' + o.org.slug + '/activity"'); // the tab

    const byKey = await web.get(`/dashboard/o/${o.org.slug}/activity?key=${bound.id}`);
    expect(pageIds(byKey.text)).to.deep.equal([okIds[1]]);
    const byProject = await web.get(`/dashboard/o/${o.org.slug}/activity?project=${project.id}`);
    expect(pageIds(byProject.text)).to.deep.equal([okIds[1]]);
    const failed = await web.get(`/dashboard/o/${o.org.slug}/activity?status=4xx&from=${new Date(Date.now() - 600_000).toISOString().slice(0, 16)}`);
    expect(pageIds(failed.text)).to.deep.equal([failedId]);
    const ok = await web.get(`/dashboard/o/${o.org.slug}/activity?status=2xx&model=sim-chat`);
    expect(pageIds(ok.text)).to.deep.equal([okIds[1], okIds[0]]);
    const none = await web.get(`/dashboard/o/${o.org.slug}/activity?model=no-such-model`);
    expect(pageIds(none.text)).to.deep.equal([]);
    expect(none.text).to.include('No requests match.');

    const detail = await web.get(`/dashboard/o/${o.org.slug}/activity/${okIds[1]}`);
    expect(detail.status).to.equal(200);
    expect(detail.text).to.include(`<td data-field="status">200</td>`);
    expect(detail.text).to.include(`<td data-field="project_id">Activity project</td>`);
    expect(detail.text).to.match(/<td data-field="api_key_id">bound key \(/);
    for (const c of LOG_COLUMNS) expect(detail.text).to.include(`data-field="${c}"`);
    const elsewhere = await buildOrg(env().redis);
    const foreign = await web.get(`/dashboard/o/${o.org.slug}/activity/${okIds[1]}`.replace(o.org.slug, elsewhere.org.slug));
    expect(foreign.status, 'not a member there').to.be.oneOf([403, 404]);

    const refused = await web.get(`/dashboard/o/${o.org.slug}/activity?key=not-an-id`);
    expect(refused.status).to.equal(400);
    expect(refused.text).to.include('data-test="field-error-key"'); // the page, its filter marked (activity-input)
    expect(refused.text).not.to.match(/at .*\.js:\d+/); // no stack trace
    const badStatus = await web.get(`/dashboard/o/${o.org.slug}/activity?status=ok');--`);
    expect(badStatus.status).to.equal(400);
  });

  it('dashboard: pages on with a cursor, and each page’s CSV export holds exactly its rows', async () => {
    const first = await web.get(`/dashboard/o/${o.org.slug}/activity`);
    const next = olderHref(first.text)!;
    expect(next).to.match(/cursor=/);
    const second = await web.get(next);
    const seen = [...pageIds(first.text), ...pageIds(second.text)];
    expect(new Set(seen).size, 'no row twice').to.equal(seen.length);
    expect(seen).to.include.members([...fillerIds, failedId, ...okIds]);
    expect(olderHref(second.text)).to.equal(undefined);

    for (const p of [first, second]) {
      const csv = await web.get(csvHref(p.text));
      expect(csv.status).to.equal(200);
      expect(csv.headers['content-type']).to.match(/^text\/csv/);
      const rows = parseCsv(csv.text);
      expect(rows[0]).to.deep.equal(LOG_COLUMNS);
      const idAt = LOG_COLUMNS.indexOf('request_id');
      expect(rows.slice(1).map((r) => r[idAt])).to.deep.equal(pageIds(p.text));
      const filler = rows.find((r) => r[idAt] === fillerIds[0]);
      if (filler) expect(filler[LOG_COLUMNS.indexOf('error_code')]).to.equal('rate_limited, "quoted"');
    }
  });

  it("a request's details read as the list does: the time in UTC without ISO's T and Z, the member's email, yes or no; an unnamed key is 'unnamed' as on the usage page", async () => {
    const other = await buildOrg(env().redis);
    const member = await buildWebMember(other.org.id, 'member');
    const theirs = await createApiKey(env().redis, { orgId: other.org.id, userId: member.id, name: 'theirs' });
    const sent = await call('POST', '/v1/chat/completions', { headers: keyHeader(theirs.key), json: { model: 'sim-chat', stream: true, messages: [{ role: 'user', content: 'details' }] } });
    expect(sent.status).to.equal(200);
    const unnamed = await call('POST', '/v1/chat/completions', { headers: keyHeader(other.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'unnamed' }] } });
    await usageSettled();
    const as = await dashboardAs(member);
    const field = (text: string, name: string) => new RegExp(`<td data-field="${name}">([^<]*)</td>`).exec(text)?.[1];
    const detail = await as.get(`/dashboard/o/${other.org.slug}/activity/${sent.headers.get('x-service-request-id')}`);
    expect(field(detail.text, 'created_at')).to.match(new RegExp(`^${new Date().toISOString().slice(0, 10)} \\d{2}:\\d{2}:\\d{2}\\.\\d{3}$`));
    expect(field(detail.text, 'user_id')).to.equal(member.email);
    expect(field(detail.text, 'stream')).to.equal('yes');
    expect(field(detail.text, 'units')).to.not.include('{');
    const list = await as.get(`/dashboard/o/${other.org.slug}/activity`);
    const prefix = (await ApiKey.findByPk(other.keyId))!.prefix;
    expect(list.text).to.match(new RegExp(`data-request-id="${unnamed.headers.get('x-service-request-id')}"[\\s\\S]*?<td data-label="API key">unnamed \\(${prefix}…\\)</td>`));
  });

  it('console: an operator sees the same Activity for the org, linked from its page', async () => {
    const admin = await startAdmin();
    try {
      const c = await consoleAs(admin.url);
      const orgPage = await c.get(`/orgs/${o.org.id}`);
      expect(orgPage.text).to.include(`href="/orgs/${o.org.id}/activity"`);
      const act = await c.get(`/orgs/${o.org.id}/activity?status=2xx`);
      expect(act.status).to.equal(200);
      expect(pageIds(act.text)).to.deep.equal([okIds[1], okIds[0]]);
      const detail = await c.get(`/orgs/${o.org.id}/activity/${failedId}`);
      expect(detail.text).to.include('<td data-field="status">400</td>');
      const csv = await c.get(`/orgs/${o.org.id}/activity.csv?status=2xx`);
      expect(parseCsv(csv.text).slice(1).map((r) => r[LOG_COLUMNS.indexOf('request_id')])).to.deep.equal([okIds[1], okIds[0]]);
    } finally {
      await admin.close();
    }
  });

  it('GET /admin/v1/request-logs: the stats scope, filters, cursor pages; bad input is a 400 envelope', async () => {
    const admin = await startAdmin();
    try {
      const { key } = await buildPlatformKey(['stats:read']);
      const { key: other } = await buildPlatformKey(['organizations:read']);
      const denied = await adminCall(admin.url, other, 'GET', `/admin/v1/request-logs?org_id=${o.org.id}`);
      expect(denied.status).to.equal(403);
      expect(denied.body.error.code).to.equal('insufficient_scope');

      const one = await adminCall(admin.url, key, 'GET', `/admin/v1/request-logs?org_id=${o.org.id}&api_key_id=${bound.id}`);
      expect(one.status, one.text).to.equal(200);
      expect(one.body).to.deep.include({ object: 'list', has_more: false, next_cursor: null });
      expect(one.body.data).to.have.length(1);
      expect(one.body.data[0]).to.deep.include({ object: 'request_log', request_id: okIds[1], org_id: o.org.id, project_id: project.id, status: 200, model: 'sim-chat' });
      expect(Object.keys(one.body.data[0])).to.deep.equal(['object', ...LOG_COLUMNS]);

      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { status: number; body: { data: Array<{ request_id: string }>; next_cursor: string | null; has_more: boolean } } =
          await adminCall(admin.url, key, 'GET', `/admin/v1/request-logs?org_id=${o.org.id}&limit=20${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.status).to.equal(200);
        ids.push(...page.body.data.map((d) => d.request_id));
        cursor = page.body.next_cursor;
        expect(page.body.has_more).to.equal(cursor !== null);
      } while (cursor);
      expect(ids.slice(0, 3)).to.deep.equal([failedId, okIds[1], okIds[0]]);
      expect(ids).to.have.length(fillerIds.length + 3);
      expect(new Set(ids).size).to.equal(ids.length);

      const status = await adminCall(admin.url, key, 'GET', `/admin/v1/request-logs?org_id=${o.org.id}&status=429&limit=1`);
      expect(status.body.data[0].request_id).to.equal(fillerIds[fillerIds.length - 1]);

      for (const q of ['org_id=nope', 'status=600', 'limit=0', 'cursor=bm9wZQ', 'from=yesterday']) {
        const r = await adminCall(admin.url, key, 'GET', `/admin/v1/request-logs?${q}`);
        expect(r.status, q).to.equal(400);
        expect(r.body.error.code, q).to.be.a('string');
        expect(r.text).not.to.match(/\.js:\d+/);
      }
      const doc = await adminCall(admin.url, key, 'GET', '/admin/v1/openapi.json');
      const documented = doc.body.paths['/admin/v1/request-logs'].get;
      expect(documented.parameters.map((p: { name: string }) => p.name)).to.include.members(['org_id', 'api_key_id', 'project_id', 'model', 'status', 'from', 'to', 'limit', 'cursor']);
    } finally {
      await admin.close();
    }
  });
});
