import crypto from 'crypto';
import { expect } from 'chai';
import { QueryTypes } from 'sequelize';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { buildWebMember, dashboardAs, WebClient, WEB_PASSWORD, type WebReply } from '../../helpers/web-client';
import { InviteCode, Membership, User } from '../../../shared/db/models';
import { createInvitation } from '../../../shared/tenancy/invitations';

const sequelize = () => Membership.sequelize!;

/** Backends of this test's database waiting for a lock (other helpers' databases share the server). */
async function lockWaiters(): Promise<number> {
  const [row] = await sequelize().query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    { type: QueryTypes.SELECT },
  );
  return row.n;
}

async function untilWaiters(n: number, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await lockWaiters()) < n) {
    if (Date.now() > deadline) throw new Error(`never ${n} lock waiter(s): ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * An org with owners X (who invites a new email) and Z (who removes X on the members page), the
 * invitation's page opened by its invitee. Both answers are web requests through the gateway.
 */
async function scene(round: number) {
  const o = await buildOrg(env().redis);
  const x = await buildWebMember(o.org.id, 'owner');
  const z = await buildWebMember(o.org.id, 'owner');
  const wz = await dashboardAs(z);
  expect((await wz.get(`/dashboard/o/${o.org.slug}/members`)).status).to.equal(200);
  const email = `race-${round}-${crypto.randomBytes(4).toString('hex')}@example.com`;
  const invite = await createInvitation(o.org.id, email, 'member', x.id);
  const invitee = new WebClient(env().gw.url);
  expect((await invitee.get(`/dashboard/invite/${invite.code}`)).status).to.equal(200);
  return {
    o, x, email, invite,
    redeem: () => invitee.post(`/dashboard/invite/${invite.code}`, { email, password: WEB_PASSWORD }),
    remove: () => wz.post(`/dashboard/o/${o.org.slug}/members/${x.id}/remove`, {}),
  };
}

/**
 * The one right end state (docs/web.md "Members"): X is gone with every open invitation X made,
 * and the invitee is in exactly when the redemption went first (303 into the org, the invitation
 * used once); a removal that went first revoked the invitation, so the redemption is 410
 * `invitation_revoked` and no account or membership is left of it. Never a 500.
 */
async function checkEnd(s: Awaited<ReturnType<typeof scene>>, redeemed: WebReply, removed: WebReply, label: string): Promise<'in' | 'out'> {
  expect(removed.status, `${label}: removal ${removed.text.slice(0, 200)}`).to.equal(303);
  expect([303, 410], `${label}: redemption ${redeemed.text.slice(0, 300)}`).to.include(redeemed.status);
  expect(await Membership.count({ where: { orgId: s.o.org.id, userId: s.x.id } }), `${label}: X removed`).to.equal(0);
  expect(await InviteCode.count({ where: { orgId: s.o.org.id, invitedBy: s.x.id, disabled: false } }), `${label}: no open invitation of X`).to.equal(0);
  const user = await User.findOne({ where: { email: s.email } });
  const inv = (await InviteCode.findByPk(s.invite.id))!;
  if (redeemed.status === 303) {
    expect(user, `${label}: the invitee's account`).to.not.equal(null);
    expect(await Membership.count({ where: { orgId: s.o.org.id, userId: user!.id } }), `${label}: the invitee is in`).to.equal(1);
    expect(inv.uses, `${label}: used once`).to.equal(1);
    return 'in';
  }
  expect(redeemed.text, label).to.include('This invitation was revoked');
  expect(user, `${label}: no account left of a refused redemption`).to.equal(null);
  expect(inv.uses, `${label}: not used`).to.equal(0);
  return 'out';
}

describe('an invitation redeemed while its maker is removed: one after the other, never a deadlock', () => {
  beforeEach(resetSim);

  it('the redemption holds the invitation while the removal holds the org: the redemption takes the org row first, so the removal waits and both succeed (before: deadlock detected, a 500)', async function () {
    this.timeout(60_000);
    const s = await scene(0);
    // hold the redemption between its claim of the invitation and its membership insert: an
    // uncommitted account with the invitee's email makes its account insert wait (unique index)
    const t = await sequelize().transaction();
    let redeeming: Promise<WebReply> | undefined;
    let removing: Promise<WebReply> | undefined;
    try {
      await User.create({ email: s.email, name: null }, { transaction: t });
      redeeming = s.redeem();
      await untilWaiters(1, 'the redemption waits for the account insert');
      removing = s.remove();
      await untilWaiters(2, 'the removal waits (for the org row, or before: for the claimed invitation)');
    } finally {
      await t.rollback();
    }
    const [redeemed, removed] = await Promise.all([redeeming!, removing!]);
    expect(await checkEnd(s, redeemed, removed, 'held'), 'the redemption went first').to.equal('in');
  });

  it('redemption and removal at the same instant, 16 times: never a 500, always a consistent end', async function () {
    this.timeout(120_000);
    for (let round = 0; round < 16; round++) {
      const s = await scene(round);
      // alternate which request leaves first, and by how much
      const delay = (round % 4) * 3;
      const [redeemed, removed] = await Promise.all([
        round % 2 ? new Promise((r) => setTimeout(r, delay)).then(s.redeem) : s.redeem(),
        round % 2 ? s.remove() : new Promise((r) => setTimeout(r, delay)).then(s.remove),
      ]);
      await checkEnd(s, redeemed, removed, `round ${round}`);
    }
  });
});
