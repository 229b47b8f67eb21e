import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildPlatformAdmin, startAdmin } from '../../helpers/admin';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { poolModel, simDeployment } from '../../helpers/pool-models';
import { setPassword } from '../../../shared/web/passwords';

const PASSWORD = 'correct horse battery';

/** A console session as a browser would hold it: the cookies of each answer, sent back. */
class Jar {
  private cookies = new Map<string, string>();
  take(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      this.cookies.set(pair.slice(0, i), pair.slice(i + 1));
    }
  }
  get header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

describe('operator console: the model pools page', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  before(async () => {
    admin = await startAdmin();
  });
  after(() => admin.close());
  beforeEach(resetSim);

  it('lists each pool’s deployments with their live health', async () => {
    const busy = simDeployment('busy', { priority: 0, rpm: 100 });
    const spare = simDeployment('spare', { priority: 1, weight: 2 });
    const model = await poolModel([busy, spare], { fallbacks: ['sim-chat'] });
    env().sim.knobs.set(busy.upstream, { status: 429, retryAfter: 30 });
    const o = await buildOrg(env().redis);
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages: [{ role: 'user', content: 'x' }] } });
    expect(r.status).to.equal(200);

    const op = await buildPlatformAdmin();
    await setPassword(op, PASSWORD);
    const jar = new Jar();
    const form = await fetch(`${admin.url}/sign-in`);
    jar.take(form);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1];
    const signIn = await fetch(`${admin.url}/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: jar.header, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, email: op.email, password: PASSWORD }).toString(),
    });
    expect(signIn.status).to.equal(303);
    jar.take(signIn);
    const res = await fetch(`${admin.url}/pools`, { headers: { cookie: jar.header }, redirect: 'manual' });
    expect(res.status).to.equal(200);
    const page = await res.text();
    expect(page).to.include('Model pools');
    expect(page).to.match(new RegExp(`data-pool="${model}" data-deployment="busy"[\\s\\S]*?100 rpm[\\s\\S]*?data-health="cooling_down"`));
    expect(page).to.match(new RegExp(`data-pool="${model}" data-deployment="spare"[\\s\\S]*?2 · 1[\\s\\S]*?data-health="healthy"`));
    expect(page).to.include('sim-chat');
  });
});
