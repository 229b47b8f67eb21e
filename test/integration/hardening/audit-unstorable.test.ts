import { expect } from 'chai';
import { adminCall, buildAdminToken, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { waitFor } from '../../helpers/wait';
import { AuditLog, Plan } from '../../../shared/db/models';

/** Text Postgres cannot store (NUL, a lone surrogate) in an admin write: refused 400 before the write, and audited. */
describe('admin writes holding text Postgres cannot store', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  let key: string;
  before(async () => {
    admin = await startAdmin();
    key = (await buildPlatformKey(['plans:write'])).key;
  });
  after(() => admin.close());

  const cases: Array<[string, unknown]> = [
    ['a NUL in a field name', { ['na\u0000me']: 'x' }],
    ['a NUL in a value', { name: 'plan\u0000x' }],
    ['a lone surrogate in a nested field name', { name: 'p', entitlements: { ['\ud800']: true } }],
    ['a lone surrogate in a nested value', { name: 'p', lane_limits: { 'chat:interactive': '\udfff' } }],
  ];
  for (const [what, body] of cases) {
    it(`${what}: 400 invalid_request, nothing written, one audit row naming the fields`, async () => {
      const plans = await Plan.count();
      const r = await adminCall(admin.url, key, 'POST', '/admin/v1/plans', body);
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error.code).to.equal('invalid_request');
      expect(r.text).to.not.include('\u0000');
      expect(await Plan.count()).to.equal(plans);
      const row = await waitFor(() => AuditLog.findOne({ where: { requestId: r.headers.get('x-service-request-id') } }));
      expect(row, 'audit row').to.not.equal(null);
      expect(row!.status).to.equal(400);
      expect(row!.family).to.equal('plans');
      expect(row!.fields.length).to.equal(Object.keys(body as object).length);
    });
  }

  it('a write naming a target longer than the audit column still leaves its row (the target id cut)', async () => {
    const { token } = await buildAdminToken();
    const long = 'x'.repeat(5000);
    const r = await adminCall(admin.url, token, 'POST', `/admin/v1/users/${long}/impersonate`, {});
    expect(r.status).to.equal(404);
    const row = await waitFor(() => AuditLog.findOne({ where: { requestId: r.headers.get('x-service-request-id') } }));
    expect(row, 'audit row').to.not.equal(null);
    expect(row!.targetId).to.equal(long.slice(0, 255));
    expect(row!.family).to.equal('platform-admin');
  });

  it('escapes the unstorable characters of a field name in the audit row', async () => {
    const r = await adminCall(admin.url, key, 'POST', '/admin/v1/plans', { ['na\u0000me']: 'x' });
    const row = await waitFor(() => AuditLog.findOne({ where: { requestId: r.headers.get('x-service-request-id') } }));
    expect(row!.fields).to.deep.equal(['na\\u0000me']);
  });
});
