import { spawn } from 'child_process';
import path from 'path';
import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { rawRequest } from '../../helpers/raw-http';
import { waitFor } from '../../helpers/wait';
import { freePort } from '../../../scripts/services/free-port';
import { config, loadConfig, ConfigError } from '../../../shared/config/env';

const token = () => process.env.METRICS_TOKEN!;

describe('/metrics is not answered to anyone on the public port', () => {
  it('answers only with the METRICS_TOKEN bearer token (401 JSON envelope otherwise, any spelling)', async () => {
    for (const p of ['/metrics', '/METRICS', '/metrics/', '/Metrics?x=1']) {
      for (const headers of [{}, { authorization: 'Bearer wrong-token-wrong-token' }, { authorization: `Basic ${token()}` }] as Array<Record<string, string>>) {
        const r = await call('GET', p, { headers });
        expect(r.status, `${p} ${JSON.stringify(headers)}`).to.equal(401);
        expect(r.body.error.code).to.equal('invalid_metrics_token');
        // RFC 6750 §3.1: a refused bearer token is invalid_token; without one (none, or Basic) the bare challenge
        expect(r.headers.get('www-authenticate'), JSON.stringify(headers)).to.equal(headers.authorization?.startsWith('Bearer ') ? 'Bearer error="invalid_token"' : 'Bearer');
        expect(r.text).to.not.include('gateway_');
      }
    }
    const ok = await call('GET', '/metrics', { headers: { authorization: `Bearer ${token()}` } });
    expect(ok.status).to.equal(200);
    expect(ok.text).to.include('gateway_http_request_duration_seconds');
  });

  it('a web process with METRICS_PORT and no token: 404 on the public port, served on its own port', async function () {
    this.timeout(30_000);
    const [port, metricsPort] = [await freePort(), await freePort()];
    const childEnv: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), METRICS_PORT: String(metricsPort), LOG_LEVEL: 'silent' };
    delete childEnv.METRICS_TOKEN;
    const child = spawn(process.execPath, [path.resolve(__dirname, '../../../api/server.js')], { env: childEnv, stdio: 'ignore' });
    try {
      const up = await waitFor(() => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false), 20_000, 100);
      expect(up, 'web process started').to.equal(true);
      const pub = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(pub.status).to.equal(404);
      expect(((await pub.json()) as { error: { code: string } }).error.code).to.equal('not_found');
      const priv = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(priv.status).to.equal(200);
      expect(await priv.text()).to.include('gateway_');
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('a key in the path is never echoed, whatever the prefix case', () => {
  it('`/A/{key}/...`: neither the 404 message nor the metrics labels hold the key', async () => {
    const o = await buildOrg(env().redis);
    for (const p of [`/A/${o.key}/v1/nope`, `/A/${o.key}/P/proj/v1/nope`, `/a/${o.key}/v1/nope`]) {
      const r = await call('GET', p);
      expect(r.status, p).to.equal(404);
      expect(r.text, p).to.not.include(o.key);
    }
    const ok = await call('GET', `/A/${o.key}/v1/models`);
    expect(ok.status).to.equal(200);
    const m = await call('GET', '/metrics', { headers: { authorization: `Bearer ${token()}` } });
    expect(m.text).to.not.include(o.key);
    expect(m.text).to.include('route="/a/v1/models"');
  });
});

describe('image URLs and signed redirects come from configuration, never the Host header', () => {
  beforeEach(resetSim);

  it('ignores a forged Host (and X-Forwarded-Host) in image URLs and content redirects', async () => {
    const o = await buildOrg(env().redis);
    const evil = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };
    const gen = await rawRequest(env().gw.url, 'POST', '/v1/images/generations', {
      headers: { ...keyHeader(o.key), ...evil, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-image', prompt: 'a host', size: '256x256' }),
    });
    expect(gen.status, gen.text).to.equal(200);
    const base = config().publicBaseUrl;
    expect(gen.body.data[0].url.startsWith(`${base}/v1/images/${gen.body.data[0].id}/content?expires=`), gen.body.data[0].url).to.equal(true);
    const meta = await rawRequest(env().gw.url, 'GET', `/v1/images/${gen.body.data[0].id}`, { headers: { ...keyHeader(o.key), ...evil } });
    expect(meta.body.url.startsWith(`${base}/`), meta.body.url).to.equal(true);
    const content = await rawRequest(env().gw.url, 'GET', `/v1/images/${gen.body.data[0].id}/content`, { headers: { ...keyHeader(o.key), ...evil } });
    expect(content.status).to.equal(302);
    expect(String(content.headers.location).startsWith(`${base}/v1/images/`), String(content.headers.location)).to.equal(true);
    expect(JSON.stringify([gen.text, meta.text, content.headers])).to.not.include('evil.example');
    // the redirect still leads to the bytes
    const bytes = await call('GET', String(content.headers.location).slice(base.length));
    expect(bytes.status).to.equal(200);
  });

  it('PUBLIC_BASE_URL is required in production; elsewhere it defaults to http://localhost:<PORT>', () => {
    const base = { DATABASE_URL: 'postgres://x@127.0.0.1/db', REDIS_URL: 'redis://127.0.0.1:6379', SECRET_KEY: 'public-surface-test-secret-0123456789abcdef' };
    expect(() => loadConfig({ ...base, NODE_ENV: 'production' })).to.throw(ConfigError, /PUBLIC_BASE_URL/);
    expect(loadConfig({ ...base, NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.com/' }).publicBaseUrl).to.equal('https://api.example.com');
    expect(loadConfig({ ...base, NODE_ENV: 'development', PORT: '9090' }).publicBaseUrl).to.equal('http://localhost:9090');
    expect(() => loadConfig({ ...base, METRICS_TOKEN: 'short' })).to.throw(ConfigError, /METRICS_TOKEN/);
  });
});
