import { expect } from 'chai';
import http from 'http';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { waitFor } from '../../helpers/wait';
import { poolsWithSettings } from '../../helpers/pools';
import { poolModel, poolStateOf, rndId, simDeployment } from '../../helpers/pool-models';
import { completion } from '../../helpers/scripted-upstream';
import { upsertProvider } from '../../../shared/catalog/catalog-ops';

const chat = (key: string, model: string) =>
  call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model, messages: [{ role: 'user', content: 'probe lease' }] } });

/**
 * An OpenAI-shaped upstream: its first request fails (503, Retry-After 1), its second (the probe) sends
 * its headers at once and its body `slowMs` later, any other answers at once.
 */
async function slowProbeUpstream(slowMs: number): Promise<{ root: string; hits: () => number; close(): Promise<void> }> {
  let n = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      n++;
      if (n === 1) return res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end(JSON.stringify({ error: { message: 'overloaded', type: 'server_error', code: null } }));
      const body = JSON.stringify(completion({ content: 'probed' }, 'stop'));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      if (n === 2) setTimeout(() => res.end(body), slowMs);
      else res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const root = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { root, hits: () => n, close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}

describe('model pools: a probe that outlives its first lease', () => {
  // probe lease = min(POOL_FIRST_BYTE_TIMEOUT_MS, 30 s) = 1 s here
  poolsWithSettings({ POOL_FIRST_BYTE_TIMEOUT_MS: '1000', POOL_INFLIGHT_LEASE_MS: '900' });
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 16 } });
  });

  it('keeps its probe lease while it runs: a request meanwhile goes to the spare, not a second probe', async function () {
    this.timeout(20_000);
    const up = await slowProbeUpstream(3_000);
    try {
      const provider = `slow-probe-${rndId()}`;
      await upsertProvider({ name: provider, kind: 'openai', base_url: `${up.root}/v1`, api_key: 'sk-probe' });
      const model = await poolModel([{ name: 'a', provider, upstream: 'up-a', priority: 0 }, simDeployment('b', { priority: 1 })]);
      const first = await chat(o.key, model);
      expect(first.headers.get('x-service-deployment'), first.text).to.equal('b');
      expect(await waitFor(async () => (await poolStateOf(model, ['a']))[0].coolingForMs === 0, 5000, 50)).to.equal(true);
      const probe = chat(o.key, model);
      expect(await waitFor(() => up.hits() === 2, 5000, 20)).to.equal(true);
      await new Promise((r) => setTimeout(r, 1_700)); // past the 1 s lease the probe was taken with
      const [state] = await poolStateOf(model, ['a']);
      expect(state.probing, 'the probe still holds its lease').to.equal(true);
      const meanwhile = await chat(o.key, model);
      expect(meanwhile.status, meanwhile.text).to.equal(200);
      expect(meanwhile.headers.get('x-service-deployment'), 'not a second probe').to.equal('b');
      expect(up.hits(), 'the failure and one probe').to.equal(2);
      const probed = await probe;
      expect(probed.status, probed.text).to.equal(200);
      expect(probed.headers.get('x-service-deployment')).to.equal('a');
    } finally {
      await up.close();
    }
  });
});
