import { expect } from 'chai';
import crypto from 'crypto';
import net from 'net';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { buildWebMember, consoleAs, dashboardAs, WebClient, WEB_PASSWORD } from '../../helpers/web-client';
import { withSettings } from '../../helpers/settings';
import { startSmtpReceiver, type SmtpReceiver } from '../../helpers/smtp-receiver';
import type { Reply } from '../../helpers/http';
import { waitFor } from '../../helpers/wait';
import { AuditLog, InviteCode, Membership, User } from '../../../shared/db/models';
import { ConfigError, loadConfig } from '../../../shared/config/env';

const email = () => `mail-${crypto.randomBytes(5).toString('hex')}@example.com`;
const FROM = 'Gateway <noreply@gateway.test>';

/** Follows a mailed link the way the invitee's browser does: opens it, sets a password. */
async function join(link: string, password = WEB_PASSWORD) {
  const web = new WebClient(env().gw.url);
  const path = new URL(link).pathname;
  const page = await web.get(path);
  const r = await web.post(path, { password });
  return { page, r };
}

describe('invitations by email (SMTP_URL + MAIL_FROM): mailed through a real SMTP server, the link joins with the role given', () => {
  let smtp: SmtpReceiver;
  before(async () => {
    smtp = await startSmtpReceiver({ user: 'gateway', pass: 's3cret pass' });
  });
  after(() => smtp.close());

  it('an owner invites from the members page: the mail arrives with the link, the invitee follows it and joins as owner; the page says it was mailed', async () => {
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    const invitee = email();
    await withSettings({ SMTP_URL: smtp.url, MAIL_FROM: FROM }, async () => {
      const web = await dashboardAs(owner);
      const b = `/dashboard/o/${o.org.slug}/members`;
      expect((await web.get(b)).text).to.include('the gateway emails it to them');
      const made = await web.post(`${b}/invitations`, { email: invitee, role: 'owner' });
      expect(made.status, made.text.slice(0, 300)).to.equal(201);
      expect(made.text).to.include(`emailed to ${invitee}`);
      expect(made.text).not.to.include('data-test="new-invite-link"');
    });
    const mail = await waitFor(() => smtp.mails.find((m) => m.subject === `You are invited to ${o.org.name}`) ?? null);
    expect(mail, 'the mail arrived').to.not.equal(null);
    const i = smtp.mails.indexOf(mail!);
    expect(smtp.recipients[i]).to.deep.equal([invitee]);
    expect(mail!.from?.value).to.deep.equal([{ name: 'Gateway', address: 'noreply@gateway.test' }]);
    expect(mail!.text).to.include(`${owner.email} invited you to join ${o.org.name} as an owner`);
    const link = /https?:\/\/\S+\/dashboard\/invite\/[A-Za-z0-9_-]+/.exec(mail!.text ?? '')?.[0];
    expect(link, mail!.text).to.be.a('string');
    const inv = (await InviteCode.findOne({ where: { orgId: o.org.id } }))!;
    expect(link!.endsWith(`/dashboard/invite/${inv.code}`)).to.equal(true);

    const { page, r } = await join(link!);
    expect(page.status).to.equal(200);
    expect(page.text).to.include(`value="${invitee}"`);
    expect(r.status, r.text.slice(0, 300)).to.equal(303);
    const user = (await User.findOne({ where: { email: invitee } }))!;
    expect((await Membership.findOne({ where: { orgId: o.org.id, userId: user.id } }))!.role).to.equal('owner');
    // the mailed link is used up like any invitation
    const again = await join(link!);
    expect(again.page.status).to.equal(410);
    const audited = await AuditLog.findOne({ where: { targetId: inv.id } });
    expect(audited!.fields).to.include('mail:sent');
  });

  it('an operator creates an invitation on the console: mailed too, and the invitee joins as member', async () => {
    const admin = await startAdmin();
    try {
      const o = await buildOrg(env().redis);
      const invitee = email();
      await withSettings({ SMTP_URL: smtp.url, MAIL_FROM: FROM }, async () => {
        const con = await consoleAs(admin.url);
        await con.get('/create');
        const made = await con.post('/create/invitation', { org: o.org.slug, email: invitee, role: 'member' });
        expect(made.status, made.text.slice(0, 300)).to.equal(201);
        expect(made.text).to.include(`emailed to ${invitee}`);
      });
      const mail = await waitFor(() => smtp.mails.find((m) => m.subject === `You are invited to ${o.org.name}`) ?? null);
      expect(mail!.text).to.include(`An operator invited you to join ${o.org.name} as a member`);
      const link = /https?:\/\/\S+\/dashboard\/invite\/[A-Za-z0-9_-]+/.exec(mail!.text ?? '')![0];
      const { r } = await join(link);
      expect(r.status).to.equal(303);
      const user = (await User.findOne({ where: { email: invitee } }))!;
      expect((await Membership.findOne({ where: { orgId: o.org.id, userId: user.id } }))!.role).to.equal('member');
    } finally {
      await admin.close();
    }
  });

  it('an operator creates an invite code through the management API with an email: mailed, `mail: sent`, the invitee joins; without SMTP or without an email nothing is sent', async () => {
    const admin = await startAdmin();
    try {
      const o = await buildOrg(env().redis);
      const { key } = await buildPlatformKey();
      const withSmtp = async (fn: () => Promise<Reply>): Promise<Reply> => {
        let out!: Reply;
        await withSettings({ SMTP_URL: smtp.url, MAIL_FROM: FROM }, async () => void (out = await fn()));
        return out;
      };
      const invitee = email();
      const made = await withSmtp(() =>
        adminCall(admin.url, key, 'POST', '/admin/v1/invite-codes', { org_id: o.org.id, email: invitee, role: 'owner', max_uses: 1, expires_at: new Date(Date.now() + 86_400_000).toISOString() }));
      expect(made.status, made.text.slice(0, 300)).to.equal(201);
      expect(made.body).to.include({ object: 'invite_code', email: invitee, mail: 'sent' });
      const mail = await waitFor(() => smtp.mails.find((m) => smtp.recipients[smtp.mails.indexOf(m)]?.[0] === invitee) ?? null);
      expect(mail!.subject).to.equal(`You are invited to ${o.org.name}`);
      expect(mail!.text).to.include(`An operator invited you to join ${o.org.name} as an owner`);
      const link = /https?:\/\/\S+\/dashboard\/invite\/[A-Za-z0-9_-]+/.exec(mail!.text ?? '')![0];
      expect(link.endsWith(`/dashboard/invite/${made.body.code}`)).to.equal(true);
      const { r } = await join(link);
      expect(r.status, r.text.slice(0, 300)).to.equal(303);
      const user = (await User.findOne({ where: { email: invitee } }))!;
      expect((await Membership.findOne({ where: { orgId: o.org.id, userId: user.id } }))!.role).to.equal('owner');

      // no email, or no mail server: the code is made, nothing is sent, the answer says so
      const before = smtp.mails.length;
      const noEmail = await withSmtp(() => adminCall(admin.url, key, 'POST', '/admin/v1/invite-codes', { org_id: o.org.id, role: 'member' }));
      expect(noEmail.status).to.equal(201);
      expect(noEmail.body.mail).to.equal(null);
      const noSmtp = await adminCall(admin.url, key, 'POST', '/admin/v1/invite-codes', { org_id: o.org.id, email: email(), role: 'member' });
      expect(noSmtp.status).to.equal(201);
      expect(noSmtp.body.mail).to.equal('not_configured');
      // a refused create sends nothing and stores nothing
      const bad = await withSmtp(() => adminCall(admin.url, key, 'POST', '/admin/v1/invite-codes', { org_id: o.org.id, email: 'not an email', role: 'member' }));
      expect(bad.status).to.equal(400);
      expect(bad.body.error.code).to.equal('invalid_request');
      await new Promise((res) => setTimeout(res, 300));
      expect(smtp.mails.length, 'nothing more delivered').to.equal(before);
      expect(await InviteCode.count({ where: { orgId: o.org.id } })).to.equal(3);
    } finally {
      await admin.close();
    }
  });

  it('a mail server that is down or refuses the login: the invitation stands and the page shows the link to send, without the SMTP password', async () => {
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    // a port nothing listens on
    const closed = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    for (const url of [`smtp://gateway:wrong-pass-xyz@127.0.0.1:${smtp.port}`, `smtp://gateway:s3cret@127.0.0.1:${closed}`]) {
      const before = smtp.mails.length;
      await withSettings({ SMTP_URL: url, MAIL_FROM: FROM }, async () => {
        const web = await dashboardAs(owner);
        const b = `/dashboard/o/${o.org.slug}/members`;
        await web.get(b);
        const invitee = email();
        const made = await web.post(`${b}/invitations`, { email: invitee, role: 'member' });
        expect(made.status, made.text.slice(0, 300)).to.equal(201);
        expect(made.text).to.include('The email could not be sent');
        expect(made.text).to.match(/data-test="new-invite-link">[^<]*\/dashboard\/invite\/[A-Za-z0-9_-]+</);
        expect(made.text).not.to.include('wrong-pass-xyz').and.not.to.include('s3cret');
        expect(await InviteCode.count({ where: { orgId: o.org.id, email: invitee } })).to.equal(1);
      });
      expect(smtp.mails.length, 'nothing delivered').to.equal(before);
    }
  });

  it('the settings are checked at start: SMTP_URL needs MAIL_FROM, an smtp:// or smtps:// URL, and an address in MAIL_FROM', () => {
    const base = { ...process.env };
    delete base.SMTP_URL;
    delete base.MAIL_FROM;
    expect(() => loadConfig({ ...base, SMTP_URL: 'smtp://127.0.0.1:2525' })).to.throw(ConfigError, /MAIL_FROM/);
    expect(() => loadConfig({ ...base, SMTP_URL: 'http://127.0.0.1:2525', MAIL_FROM: FROM })).to.throw(ConfigError, /SMTP_URL/);
    expect(() => loadConfig({ ...base, SMTP_URL: 'smtp://127.0.0.1:2525', MAIL_FROM: 'Gateway' })).to.throw(ConfigError, /MAIL_FROM/);
    expect(loadConfig({ ...base, SMTP_URL: 'smtps://u:p@mail.example.com:465', MAIL_FROM: FROM })).to.include({ smtpUrl: 'smtps://u:p@mail.example.com:465', mailFrom: FROM });
    expect(loadConfig(base).smtpUrl).to.equal(undefined);
  });

  it('without SMTP_URL the page shows the link to send, as before', async () => {
    const o = await buildOrg(env().redis);
    const web = await dashboardAs(await buildWebMember(o.org.id, 'owner'));
    const b = `/dashboard/o/${o.org.slug}/members`;
    expect((await web.get(b)).text).to.include('send it to them yourself');
    const made = await web.post(`${b}/invitations`, { email: email(), role: 'member' });
    expect(made.status).to.equal(201);
    expect(made.text).to.match(/Send them this link/).and.to.match(/data-test="new-invite-link"/);
  });
});
