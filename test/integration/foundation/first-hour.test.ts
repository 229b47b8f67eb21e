import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { call } from '../../helpers/http';
import { UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';

const PLACEMENTS = ['SERVICE-API-KEY header', 'Authorization: Bearer', 'x-api-key'];
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

describe('the first hour: what a newcomer is told', () => {
  beforeEach(resetSim);

  it('a provider key pasted by habit is refused 401 saying what was received (never the value) and naming all three placements', async () => {
    await usageSettled();
    const before = await UsageEvent.count();
    const secret = `sk-proj-${'a1'.repeat(20)}`;
    const cases: Array<[Record<string, string>, string]> = [
      [{ authorization: `Bearer ${secret}` }, 'a bearer token not starting with svc_'],
      [{ 'x-api-key': secret }, 'an x-api-key value not starting with svc_'],
      [{ authorization: `Bearer ${secret}`, 'x-api-key': secret }, 'a bearer token and an x-api-key value not starting with svc_'],
    ];
    for (const [headers, received] of cases) {
      const r = await call('POST', '/v1/chat/completions', { headers, json: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] } });
      expect(r.status, r.text).to.equal(401);
      expect(r.body.error.code).to.equal('INVALID_API_KEY');
      expect(r.body.error.message).to.include(`received ${received}`);
      for (const p of PLACEMENTS) expect(r.body.error.message).to.include(p);
      expect(r.text, 'the secret is never echoed').not.to.include(secret).and.not.include('a1a1a1');
    }
    const none = await call('GET', '/v1/models');
    expect(none.status).to.equal(401);
    expect(none.body.error.message).to.match(/^Missing API key\./);
    for (const p of PLACEMENTS) expect(none.body.error.message).to.include(p);
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count()).to.equal(before);
  });

  it('a browser opening {base_url}/ is sent to the dashboard; API clients keep the JSON answer', async () => {
    const browser = await fetch(`${env().gw.url}/`, { headers: { accept: BROWSER_ACCEPT }, redirect: 'manual' });
    expect(browser.status).to.equal(302);
    expect(browser.headers.get('location')).to.equal('/dashboard');
    const page = await fetch(`${env().gw.url}/`, { headers: { accept: BROWSER_ACCEPT } });
    expect(page.headers.get('content-type')).to.match(/^text\/html/);
    expect(new URL(page.url).pathname).to.match(/^\/dashboard/);
    for (const accept of ['application/json', '*/*', undefined]) {
      const r = await fetch(`${env().gw.url}/`, { headers: accept ? { accept } : {}, redirect: 'manual' });
      expect(r.status, `Accept: ${accept}`).to.equal(401);
      expect(r.headers.get('content-type')).to.match(/^application\/json/);
      expect(((await r.json()) as { error: { code: string } }).error.code).to.equal('INVALID_API_KEY');
    }
    const post = await fetch(`${env().gw.url}/`, { method: 'POST', headers: { accept: BROWSER_ACCEPT }, redirect: 'manual' });
    expect(post.status, 'only GET is redirected').to.equal(401);
  });
});
