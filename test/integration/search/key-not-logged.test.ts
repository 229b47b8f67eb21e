import { expect } from 'chai';
import type { ChildProcess } from 'child_process';
import { env, resetSim } from '../../helpers/harness';
import { call, keyHeader } from '../../helpers/http';
import { spawnWith } from '../../helpers/process';
import { kill } from '../../helpers/processes';
import { pools } from '../../helpers/pools';
import { waitFor } from '../../helpers/wait';
import { freePort } from '../../../scripts/services/free-port';
import { setOrgSearchKey } from '../../../shared/search/settings';
import { searchOrg, testProvider } from './helpers';

/** A child process whose stdout and stderr (pino writes to stdout) are kept. */
function captured(child: ChildProcess): { text: () => string } {
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  return { text: () => out };
}

describe('web search: a provider key never appears in a log', () => {
  const children: ChildProcess[] = [];
  const searchWorkers = () => pools().workers.filter((w) => w.name === 'search');
  beforeEach(resetSim);
  afterEach(async () => {
    for (const c of children.splice(0)) await kill(c);
    await Promise.all(searchWorkers().map((w) => w.resume()));
  });

  it('a web process and the only search worker at debug level: searches refused with the platform key and an org key, and an upstream 500, leave neither key in their logs', async () => {
    // the in-process search pool stands aside: the spawned worker takes the jobs
    await Promise.all(searchWorkers().map((w) => w.pause()));
    const worker = spawnWith('workers/main.js', ['search'], { LOG_LEVEL: 'debug' });
    children.push(worker);
    const workerLog = captured(worker);
    expect(await waitFor(() => workerLog.text().includes('workers started'), 20_000, 100), 'search worker started').to.equal(true);
    const port = await freePort();
    const web = spawnWith('api/server.js', [], { LOG_LEVEL: 'debug', PORT: String(port) });
    children.push(web);
    const webLog = captured(web);
    const url = `http://127.0.0.1:${port}`;
    expect(await waitFor(async () => (await fetch(`${url}/healthz`).catch(() => null))?.status === 200, 20_000, 100), 'web up').to.equal(true);

    const platformSecret = `invalid-platform-secret-${Date.now()}-zq`;
    const ownSecret = `invalid-own-secret-${Date.now()}-xk`;
    const p = await testProvider('brave', { platformKey: platformSecret });
    const o = await searchOrg();
    // the platform key refused upstream, then the org's own key refused, then an upstream 500 with the own key
    const refused = await call('POST', '/v1/alpha/search', { base: url, headers: keyHeader(o.key), json: { query: 'q', provider: p.name } });
    expect(refused.body.error?.code, refused.text).to.equal('search_provider_auth_failed');
    await setOrgSearchKey(o.org.id, p.name, ownSecret, { redis: env().redis, actor: { type: 'cli', id: null, label: 'test' }, via: { method: 'CLI', path: 'test' } });
    const ownRefused = await call('POST', '/v1/alpha/search', { base: url, headers: keyHeader(o.key), json: { query: 'q', provider: p.name } });
    expect(ownRefused.body.error?.code, ownRefused.text).to.equal('search_provider_auth_failed');
    // a valid own key (the simulator accepts any key not starting with `invalid`), and the provider answers 500
    const goodSecret = `own-valid-secret-${Date.now()}-wv`;
    await setOrgSearchKey(o.org.id, p.name, goodSecret, { redis: env().redis, actor: { type: 'cli', id: null, label: 'test' }, via: { method: 'CLI', path: 'test' } });
    await call('POST', '/_sim/knobs', { base: env().simUrl, json: { model: 'search:brave', status: 500 } });
    const failed = await call('POST', '/v1/alpha/search', { base: url, headers: keyHeader(o.key), json: { query: 'q', provider: p.name } });
    expect(failed.body.error?.code, failed.text).to.equal('search_provider_error');
    const sent = env().sim.log.entries.filter((e) => e.path.startsWith('/brave/')).map((e) => e.subscriptionToken);
    expect(sent, 'the provider was sent each key in turn').to.deep.equal([platformSecret, ownSecret, goodSecret]);

    // both processes' pino output is captured (at debug level), and nothing in it carries either key
    expect(webLog.text(), 'web log captured').to.contain('"msg":"web listening"');
    expect(workerLog.text(), 'worker log captured').to.contain('"msg":"workers started"');
    // the three failures were logged (so the assertions below read the lines that could carry a key)
    const failedLines = () => workerLog.text().split('\n').filter((l) => l.includes('"msg":"job failed"'));
    expect(await waitFor(() => failedLines().length >= 3, 10_000, 50), 'three failure lines written').to.equal(true);
    const failures = failedLines().map((l) => JSON.parse(l) as { code: string; status: number; queue: string });
    expect(failures.map((f) => [f.queue, f.code, f.status])).to.deep.equal([
      ['search', 'search_provider_auth_failed', 502],
      ['search', 'search_provider_auth_failed', 400],
      ['search', 'search_provider_error', 502],
    ]);
    const logs = webLog.text() + workerLog.text();
    // the provider's 401 bodies quote the key they were sent; the clients' answers do not
    for (const r of [refused, ownRefused, failed]) for (const k of [platformSecret, ownSecret, goodSecret]) expect(r.text).not.to.contain(k);
    expect(logs, 'platform key in a log').not.to.contain(platformSecret);
    expect(logs, 'org key in a log').not.to.contain(ownSecret);
    expect(logs, 'second org key in a log').not.to.contain(goodSecret);
  });
});
