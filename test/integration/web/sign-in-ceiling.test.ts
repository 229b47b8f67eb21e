import { expect } from 'chai';
import crypto from 'crypto';
import { env } from '../../helpers/harness';
import { buildPlatformAdmin, startAdmin } from '../../helpers/admin';
import { buildOrg } from '../../helpers/factories';
import { buildWebMember, WebClient, WEB_PASSWORD } from '../../helpers/web-client';
import { config } from '../../../shared/config/env';
import { setPassword } from '../../../shared/web/passwords';

/** A loopback source address of this test's own: the limiters count per client address. */
const address = () => `127.0.${1 + crypto.randomInt(200)}.${2 + crypto.randomInt(250)}`;

/**
 * One address trying many emails: each email stays under WEB_SIGNIN_MAX_ATTEMPTS, so only the
 * per-address ceiling (WEB_SIGNIN_MAX_PER_ADDRESS, default 20 failures in 15 minutes) stops it.
 * Past the ceiling the answer is 429 and the password is not checked: the right one is refused too.
 */
async function sprayFrom(web: WebClient, signInPath: string, emails: string[], rounds: number): Promise<number[]> {
  await web.get(signInPath);
  const statuses: number[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const email of emails) statuses.push((await web.post(signInPath, { email, password: `wrong-${round}` })).status);
  }
  return statuses;
}

describe('web sign-in: a per-address ceiling across emails (dashboard and console)', () => {
  it('dashboard: 60 failed attempts over 12 emails from one address, the ones past the ceiling are 429 and never checked', async function () {
    this.timeout(60_000);
    const ceiling = config().webSignInMaxPerAddress;
    expect(ceiling).to.equal(20);
    expect(config().webSignInMaxAttempts).to.be.at.least(5); // 5 per email: below the per-email limit
    const o = await buildOrg(env().redis);
    const victim = await buildWebMember(o.org.id, 'member');
    const emails = [victim.email, ...Array.from({ length: 11 }, (_, i) => `spray-${i}-${crypto.randomBytes(3).toString('hex')}@example.com`)];
    const web = new WebClient(env().gw.url, address());
    const statuses = await sprayFrom(web, '/dashboard/sign-in', emails, 5);
    expect(statuses).to.have.length(60);
    expect(statuses.slice(0, ceiling)).to.deep.equal(Array(ceiling).fill(401));
    expect(statuses.slice(ceiling)).to.deep.equal(Array(60 - ceiling).fill(429));
    const right = await web.post('/dashboard/sign-in', { email: victim.email, password: WEB_PASSWORD }, { json: true });
    expect(right.status).to.equal(429);
    expect(right.body.error.code).to.equal('too_many_sign_in_attempts');
    expect(right.headers['retry-after']).to.equal('900');
    // another address is not affected: the victim signs in from there
    const elsewhere = new WebClient(env().gw.url, address());
    expect((await elsewhere.signIn('/dashboard/sign-in', victim.email, WEB_PASSWORD)).status).to.equal(303);
  });

  it('console: the same ceiling on the operator sign-in', async function () {
    this.timeout(60_000);
    const admin = await startAdmin();
    try {
      const op = await buildPlatformAdmin();
      await setPassword(op, WEB_PASSWORD);
      const emails = [op.email, ...Array.from({ length: 4 }, (_, i) => `op-spray-${i}-${crypto.randomBytes(3).toString('hex')}@example.com`)];
      const web = new WebClient(admin.url, address());
      const statuses = await sprayFrom(web, '/sign-in', emails, 5);
      expect(statuses).to.deep.equal([...Array(20).fill(401), ...Array(5).fill(429)]);
      expect((await web.post('/sign-in', { email: op.email, password: WEB_PASSWORD })).status).to.equal(429);
    } finally {
      await admin.close();
    }
  });
});
