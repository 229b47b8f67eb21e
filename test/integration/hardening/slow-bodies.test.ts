import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { buildAdminToken, bearer, startAdmin } from '../../helpers/admin';
import { keyHeader } from '../../helpers/http';
import { expectErrorEnvelope } from '../../helpers/errors';
import { slowPost } from '../../helpers/slow-body';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';
import { config } from '../../../shared/config/env';

/**
 * Every route without a read deadline of its own gets the shared one (BODY_READ_TIMEOUT_MS, short in
 * tests): a body that stalls is answered 408 `body_read_timeout` in the JSON envelope, within the
 * deadline (plus scheduling slack), the connection closed, nothing sent upstream and nothing billed.
 */
describe('slow request bodies: a JSON 408 within the deadline on every route', () => {
  let o: TestOrg;
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  let platformKey: string;
  const json = { 'content-type': 'application/json' };
  const boundary = 'slowbodyboundary';
  const multipart = { 'content-type': `multipart/form-data; boundary=${boundary}` };

  before(async function () {
    this.timeout(20_000);
    o = await buildOrg(env().redis);
    admin = await startAdmin();
    platformKey = (await buildAdminToken()).token;
  });
  after(() => admin?.close());
  beforeEach(resetSim);

  const cases: Array<{ name: string; path: string; headers: () => Record<string, string>; partial: string; base?: () => string }> = [
    { name: 'chat completions', path: '/v1/chat/completions', headers: () => ({ ...json, ...keyHeader(o.key) }), partial: '{"model":"sim-chat","messages":[' },
    { name: 'legacy completions', path: '/v1/completions', headers: () => ({ ...json, ...keyHeader(o.key) }), partial: '{"model":"sim-chat","prompt":"' },
    { name: 'messages', path: '/v1/messages', headers: () => ({ ...json, ...keyHeader(o.key) }), partial: '{"model":"sim-chat","max_tokens":5,' },
    { name: 'count_tokens', path: '/v1/messages/count_tokens', headers: () => ({ ...json, ...keyHeader(o.key) }), partial: '{"model":"sim-chat",' },
    { name: 'responses', path: '/v1/responses', headers: () => ({ ...json, ...keyHeader(o.key) }), partial: '{"model":"sim-chat","input":"' },
    { name: 'embeddings', path: '/v1/embeddings', headers: () => ({ ...json, ...keyHeader(o.key) }), partial: '{"model":"sim-embed","input":"' },
    { name: 'images JSON', path: '/v1/images/generations', headers: () => ({ ...json, ...keyHeader(o.key) }), partial: '{"model":"sim-image","prompt":"' },
    {
      name: 'images multipart',
      path: '/v1/images/edits',
      headers: () => ({ ...multipart, ...keyHeader(o.key) }),
      partial: `--${boundary}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\na cat\r\n--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n\x89PNG`,
    },
    { name: 'admin API', path: '/admin/v1/platform-keys', headers: () => ({ ...json, ...bearer(platformKey) }), partial: '{"scopes":["', base: () => admin.url },
  ];

  for (const c of cases) {
    it(`${c.name}: 408 body_read_timeout in the envelope, nothing upstream or billed`, async function () {
      this.timeout(15_000);
      const deadline = config().bodyReadTimeoutMs;
      const r = await slowPost(`${c.base ? c.base() : env().gw.url}${c.path}`, c.headers(), c.partial, 100_000);
      expect(r.status, r.text).to.equal(408);
      expectErrorEnvelope(r.text, 'body_read_timeout');
      expect(r.headers.get('connection')).to.equal('close');
      expect(r.ms, 'answered at the deadline').to.be.within(deadline - 50, deadline + 3000);
      expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
      await usageSettled();
      expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'nothing billed').to.equal(0);
    });
  }

  it('a body that arrives in time is not cut: a slow but complete chat request is answered normally', async function () {
    this.timeout(15_000);
    const body = JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] });
    const r = await fetch(`${env().gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...json, ...keyHeader(o.key) }, body });
    expect(r.status, await r.clone().text()).to.equal(200);
  });
});
