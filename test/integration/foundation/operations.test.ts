import { expect } from 'chai';
import http from 'http';
import { env, resetSim } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { buildWebMember, dashboardAs } from '../../helpers/web-client';
import { createAdminApp } from '../../../api/admin/app';
import { parsePools } from '../../../workers/main';
import { loadConfig, ConfigError } from '../../../shared/config/env';

describe('operations: metrics, health, dashboard, pools, configuration', () => {
  it('exposes Prometheus metrics with queue depth, lane use and latency', async () => {
    const o = await buildOrg(env().redis);
    await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'm' }] } });
    const r = await call('GET', '/metrics', { headers: { authorization: `Bearer ${process.env.METRICS_TOKEN}` } });
    expect(r.status).to.equal(200);
    expect(r.text).to.match(/gateway_queue_jobs\{queue="chat-interactive",state="active"\} \d+/);
    expect(r.text).to.match(/gateway_http_request_duration_seconds_count\{method="POST",route="\/v1\/chat\/completions",status="200"\} \d+/);
  });

  it('labels a route once however a caller spells it (case, an org slug percent-encoded, a path key): /metrics does not grow per spelling', async () => {
    const metrics = async () => (await call('GET', '/metrics', { headers: { authorization: `Bearer ${process.env.METRICS_TOKEN}` } })).text;
    const labels = (text: string) => new Set(text.split('\n').filter((l) => l.startsWith('gateway_http_request_duration_seconds_count')).map((l) => l.replace(/ \d+$/, '')));
    const o = await buildOrg(env().redis);
    const web = await dashboardAs(await buildWebMember(o.org.id, 'member'));
    const slug = o.org.slug;
    const encoded = (i: number) => `${slug.slice(0, i)}%${slug.charCodeAt(i).toString(16)}${slug.slice(i + 1)}`;
    const visit = async (n: number) => {
      expect((await web.get(`/dashboard/o/${encoded(n)}/models`)).status, `/dashboard/o/${encoded(n)}/models`).to.equal(200);
      // another spelling of the dashboard's prefix is sent to the canonical one (its cookie's path)
      const dash = ['/DASHBOARD', '/Dashboard', '/dAshboard', '/DashBoard'][n];
      const moved = await web.get(`${dash}/o/${slug}/models`);
      expect(moved.status, dash).to.equal(308);
      expect(moved.headers.location).to.equal(`/dashboard/o/${slug}/models`);
      expect((await call('GET', `${dash}/assets/style.css`)).status).to.be.oneOf([200, 308]);
      expect((await call('GET', `/${n % 2 ? 'A' : 'a'}/${o.key}/v1/models`)).status).to.equal(200);
    };
    await visit(0);
    const before = labels(await metrics());
    for (const n of [1, 2, 3]) await visit(n);
    const after = labels(await metrics());
    expect([...after].filter((l) => !before.has(l)), 'label sets added by other spellings of the same requests').to.deep.equal([]);
    const text = [...after].join('\n');
    expect(text).to.include('route="/dashboard/o/:org/models"');
    expect(text, 'no org slug in a label').to.not.include(slug);
    expect(text, 'no key in a label').to.not.include(o.key);
  });

  it('reports a held lane lease as a sample of gateway_lane_leases, not only its # HELP line', async () => {
    const o = await buildOrg(env().redis);
    const sample = async () => /^gateway_lane_leases\{pool="chat",lane="interactive"\} (\d+)$/m.exec((await call('GET', '/metrics', { headers: { authorization: `Bearer ${process.env.METRICS_TOKEN}` } })).text)?.[1];
    resetSim();
    env().sim.knobs.set('sim-chat-1', { hold: true });
    const held = call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'held' }] } });
    try {
      expect(await waitFor(() => env().sim.log.entries.length === 1, 10_000), 'the request is upstream').to.equal(true);
      expect(await sample(), 'one lease held by this process').to.equal('1');
    } finally {
      env().sim.knobs.release();
    }
    expect((await held).status).to.equal(200);
    expect(await waitFor(async () => (await sample()) !== '1', 5000), 'the sample drops once the lease is released').to.equal(true);
    resetSim();
  });

  it('guards the queue dashboard on the admin app', async () => {
    const app = createAdminApp({ redis: env().redis, queues: env().gw.ctx.queues });
    const server = http.createServer(app).listen(0);
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      process.env.ADMIN_DASHBOARD_PASSWORD = 'pw-for-test';
      const denied = await fetch(`${base}/admin/queues`);
      expect(denied.status).to.equal(401);
      const ok = await fetch(`${base}/admin/queues`, { headers: { authorization: `Basic ${Buffer.from('admin:pw-for-test').toString('base64')}` } });
      expect(ok.status).to.equal(200);
      expect(ok.headers.get('x-frame-options'), 'never framed by another site').to.equal('DENY');
      expect(ok.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");
      expect(await ok.text()).to.match(/<html/i);
      // a change from another site's page (remembered basic auth goes with it) is refused; from its own pages, done
      const basic = { authorization: `Basic ${Buffer.from('admin:pw-for-test').toString('base64')}` };
      const queue = env().gw.ctx.queues.shards('images-background' as never)[0];
      const pause = (headers: Record<string, string>) => fetch(`${base}/admin/queues/api/queues/${queue.name}/pause`, { method: 'PUT', headers: { ...basic, ...headers } });
      const add = (headers: Record<string, string>) => fetch(`${base}/admin/queues/api/queues/${queue.name}/add`, { method: 'POST', headers: { ...basic, 'content-type': 'text/plain', ...headers }, body: 'name=x' });
      const before = await queue.count();
      for (const [label, headers] of [['Origin of another site', { origin: 'https://evil.example' }], ['Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }], ['same-site subdomain', { 'sec-fetch-site': 'same-site' }], ['Origin null', { origin: 'null' }]] as const) {
        for (const send of [pause, add]) {
          const r = await send(headers);
          expect(r.status, label).to.equal(403);
          expect(((await r.json()) as { error: { code: string } }).error.code, label).to.equal('cross_site_request');
        }
      }
      expect(await queue.isPaused(), 'not paused').to.equal(false);
      expect(await queue.count(), 'no job added').to.equal(before);
      const own = await pause({ origin: base, 'sec-fetch-site': 'same-origin' });
      expect(own.status, 'from its own page').to.be.below(300);
      expect(await queue.isPaused()).to.equal(true);
      await queue.resume();
      expect((await fetch(`${base}/healthz`)).status).to.equal(200);
    } finally {
      delete process.env.ADMIN_DASHBOARD_PASSWORD;
      server.close();
    }
  });

  it('refuses unknown worker pools at start', () => {
    expect(parsePools(['chat'])).to.deep.equal(['chat']);
    expect(() => parsePools(['nope'])).to.throw(/unknown pool 'nope'/);
    expect(() => parsePools([])).to.throw(/name at least one pool/);
  });

  it('validates configuration once and reports every problem', () => {
    try {
      loadConfig({ PORT: 'x', DATABASE_URL: 'mysql://x', REDIS_URL: '', SECRET_KEY: 'short' });
      expect.fail('should throw');
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      const msg = (err as Error).message;
      for (const name of ['PORT', 'DATABASE_URL', 'REDIS_URL', 'SECRET_KEY']) expect(msg).to.include(name);
    }
  });
});
