import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { adminSuite, buildPlatformKey } from '../../helpers/admin';
import { rndId } from '../../helpers/pool-models';
import { WebClient, WEB_PASSWORD } from '../../helpers/web-client';

/**
 * An invitation's `code` is what redeems it at /dashboard/invite/{code}: whoever reads it can join the
 * organization with the invitation's role (owner included). So reading it is the `invite-codes`
 * family's write, not its read: a read-only management key sees every invitation but never its code.
 */
describe('management API: an invitation’s redeemable code is the invite-codes:write scope’s', function () {
  this.timeout(30_000);
  const admin = adminSuite();
  const keys: Record<'readOnly' | 'writer' | 'auditor', string> = { readOnly: '', writer: '', auditor: '' };
  before(async () => {
    keys.auditor = (await buildPlatformKey(['audit-logs:read'])).key;
    keys.readOnly = (await buildPlatformKey(['invite-codes:read'])).key;
    keys.writer = (await buildPlatformKey(['invite-codes:write'])).key;
  });

  it('invite-codes:read lists and gets invitations with code null, and may not filter by code; invite-codes:write and the create answer see the code', async () => {
    const { org } = await buildOrg(env().redis);
    const created = await admin.callAs(keys.writer, 'POST', '/admin/v1/invite-codes', { org_id: org.id, role: 'owner', email: `boss-${rndId()}@example.com` });
    expect(created.status, created.text).to.equal(201);
    const code = created.body.code as string;
    expect(code).to.match(/^[A-Za-z0-9_-]{4,64}$/);
    const chosen = `own-${rndId()}`; // a code the operator chose, as a mailed one would be
    expect((await admin.call('POST', '/admin/v1/invite-codes', { org_id: org.id, role: 'member', code: chosen })).status).to.equal(201);

    const readList = await admin.callAs(keys.readOnly, 'GET', `/admin/v1/invite-codes?org_id=${org.id}`);
    expect(readList.status, readList.text).to.equal(200);
    expect(readList.body.data).to.have.length(2);
    expect(readList.body.data.map((i: { code: unknown }) => i.code)).to.deep.equal([null, null]);
    expect(readList.body.data.map((i: { role: string }) => i.role).sort(), 'the rest is shown').to.deep.equal(['member', 'owner']);
    const readOne = await admin.callAs(keys.readOnly, 'GET', `/admin/v1/invite-codes/${created.body.id}`);
    expect(readOne.status, readOne.text).to.equal(200);
    expect(readOne.body.code).to.equal(null);
    expect(readOne.body.email).to.equal(created.body.email);
    for (const text of [readList.text, readOne.text]) expect(text).not.to.contain(code).and.not.to.contain(chosen);
    // filtering by code would be a way to test guesses unthrottled
    const guessed = await admin.callAs(keys.readOnly, 'GET', `/admin/v1/invite-codes?code=${chosen}`);
    expect(guessed.status, guessed.text).to.equal(403);
    expect(guessed.body.error.code).to.equal('insufficient_scope');
    expect(guessed.headers.get('www-authenticate')).to.equal('Bearer error="insufficient_scope", scope="invite-codes:write"');

    const writeList = await admin.callAs(keys.writer, 'GET', `/admin/v1/invite-codes?org_id=${org.id}`);
    expect(writeList.body.data.map((i: { code: string }) => i.code).sort()).to.deep.equal([code, chosen].sort());
    expect((await admin.callAs(keys.writer, 'GET', `/admin/v1/invite-codes/${created.body.id}`)).body.code).to.equal(code);
    const found = await admin.callAs(keys.writer, 'GET', `/admin/v1/invite-codes?code=${chosen}`);
    expect(found.body.data.map((i: { code: string }) => i.code)).to.deep.equal([chosen]);
  });

  it('a redemption is audited under the invitation’s id, not its code: an audit-logs:read key finds no code a second use could redeem', async () => {
    const { org } = await buildOrg(env().redis);
    const made = await admin.call('POST', '/admin/v1/invite-codes', { org_id: org.id, role: 'owner', max_uses: 2 });
    const web = new WebClient(env().gw.url);
    await web.get(`/dashboard/invite/${made.body.code}`);
    const joined = await web.post(`/dashboard/invite/${made.body.code}`, { email: `joiner-${rndId()}@example.com`, password: WEB_PASSWORD });
    expect(joined.status, joined.text.slice(0, 300)).to.equal(303);
    const byCode = await admin.callAs(keys.auditor, 'GET', `/admin/v1/audit-logs?target_id=${made.body.code}`);
    expect(byCode.status, byCode.text).to.equal(200);
    expect(byCode.body.data, 'no entry names the code').to.deep.equal([]);
    const byId = await admin.callAs(keys.auditor, 'GET', `/admin/v1/audit-logs?target_id=${made.body.id}`);
    expect(byId.body.data.map((l: { path: string }) => l.path)).to.include('/dashboard/invite');
  });

  it('the OpenAPI document says who sees the code', async () => {
    const doc = await admin.call('GET', '/admin/v1/openapi.json');
    const code = doc.body.paths['/admin/v1/invite-codes/{id}'].get.responses['200'].content['application/json'].schema.properties.code;
    expect(code.anyOf, 'null for read-only keys').to.deep.include({ type: 'null' });
    expect(code.description).to.contain('invite-codes:write');
  });
});
