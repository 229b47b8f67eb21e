import crypto from 'crypto';
import { expect } from 'chai';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { AuditLog, CreditReservation, PlatformCredential, Provider, UsageEvent, Wallet } from '../../../shared/db/models';
import { db } from '../../../shared/db/sequelize';
import { platformCredential, platformCredentialNow } from '../../../workers/credentials';
import { waitFor } from '../../helpers/wait';
import { resetSim } from '../../helpers/harness';
import { decide, expectRefused, requestIdOf, validBody, walletOf } from '../systemone/helpers';

describe('management API: billing, stats, platform credentials at rest', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  let key: string;
  before(async () => {
    admin = await startAdmin();
    key = (await buildPlatformKey(['billing:write', 'stats:read', 'platform-credentials:write'])).key;
  });
  /** Models whose usage rows a test dated on days without a partition (they land in DEFAULT). */
  const dated: string[] = [];
  after(async () => {
    await admin.close();
    // removed as an operator would: gateway doctor warns about DEFAULT rows, and operations/doctor expects none
    if (dated.length) await db().query('DELETE FROM usage_events WHERE model IN (:dated)', { replacements: { dated } });
  });
  beforeEach(resetSim);
  const req = (method: string, path: string, json?: unknown) => adminCall(admin.url, key, method, `/admin/v1${path}`, json);

  it('tops up a wallet through billing records, caps reservations with credits_bound, lists reservations', async () => {
    const o = await buildOrg(env().redis);
    const top = await req('POST', '/billing/records', { org_id: o.org.id, kind: 'top_up', amount_micros: 5_000_000, note: 'card' });
    expect(top.status, top.text).to.equal(201);
    expect(top.body).to.include({ object: 'billing_record', org_id: o.org.id, kind: 'top_up', amount_micros: 5_000_000 });
    const audited = await waitFor(() => AuditLog.findOne({ where: { targetId: top.body.id } }));
    expect(audited).to.include({ method: 'POST', path: '/admin/v1/billing/records', family: 'billing', status: 201, outcome: 'success' });
    const wallets = await req('GET', `/billing/wallets?org_id=${o.org.id}`);
    expect(wallets.body.data).to.have.length(1);
    const w = wallets.body.data[0];
    expect(w).to.include({ balance_micros: 5_000_000, reserved_micros: 0, available_micros: 5_000_000, credits_bound: null });

    await CreditReservation.create({ orgId: o.org.id, requestId: `req_${crypto.randomBytes(8).toString('hex')}`, amountMicros: '4000000' });
    await Wallet.update({ reservedMicros: '4000000' }, { where: { orgId: o.org.id } });
    const below = await req('POST', '/billing/records', { org_id: o.org.id, kind: 'adjustment', amount_micros: -2_000_000 });
    expect(below.status).to.equal(400);
    expect(below.body.error.code).to.equal('insufficient_balance');
    const adj = await req('POST', '/billing/records', { org_id: o.org.id, kind: 'adjustment', amount_micros: -1_000_000 });
    expect(adj.status).to.equal(201);
    expect((await Wallet.findOne({ where: { orgId: o.org.id } }))!.balanceMicros).to.equal('4000000');

    const bound = await req('PATCH', `/billing/wallets/${w.id}`, { credits_bound: 250_000 });
    expect(bound.status, bound.text).to.equal(200);
    expect(bound.body.credits_bound).to.equal(250_000);
    expect((await req('PATCH', `/billing/wallets/${w.id}`, { balance_micros: 1 })).status).to.equal(400); // balances move only through records
    const res = await req('GET', `/billing/reservations?org_id=${o.org.id}&state=reserved`);
    expect(res.body.data).to.have.length(1);
    expect(res.body.data[0]).to.include({ amount_micros: 4_000_000, state: 'reserved' });
    const records = await req('GET', `/billing/records?org_id=${o.org.id}`);
    expect(records.body.total).to.equal(2);

    for (const bad of [{ org_id: o.org.id, kind: 'top_up', amount_micros: -5 }, { org_id: o.org.id, kind: 'gift', amount_micros: 5 }, { org_id: o.org.id, kind: 'credit', amount_micros: 0 }, { org_id: o.org.id, kind: 'credit', amount_micros: 1.5 }]) {
      const r = await req('POST', '/billing/records', bad);
      expect(r.status, JSON.stringify(bad)).to.equal(400);
    }
    const ghost = await req('POST', '/billing/records', { org_id: '00000000-0000-4000-8000-000000000000', kind: 'credit', amount_micros: 5 });
    expect(ghost.body.error.code).to.equal('invalid_reference');
    expect((await req('GET', `/billing/records?org_id=${o.org.id}`)).body.total).to.equal(2);
  });

  it('a credits_bound set through the API caps the next reservation; raised again, the request is served', async () => {
    const o = await buildOrg(env().redis, { policies: { systemone: 'metered' } });
    expect((await req('POST', '/billing/records', { org_id: o.org.id, kind: 'top_up', amount_micros: 1_000_000 })).status).to.equal(201);
    const w = (await req('GET', `/billing/wallets?org_id=${o.org.id}`)).body.data[0];
    // without a bound the request reserves, and settles, less than 1 000 000: find what it reserves
    const first = await decide(o.key, validBody());
    expect(first.status, first.text).to.equal(200);
    const reserved = Number((await CreditReservation.findOne({ where: { requestId: requestIdOf(first) } }))!.amountMicros);
    expect(reserved).to.be.above(1);

    const bound = await req('PATCH', `/billing/wallets/${w.id}`, { credits_bound: reserved - 1 });
    expect(bound.status, bound.text).to.equal(200);
    const before = await walletOf(o.org.id);
    const capped = await decide(o.key, validBody());
    await expectRefused(capped, 402, 'reservation_too_large');
    expect(capped.body.error.credits_bound).to.equal(reserved - 1);
    expect(await walletOf(o.org.id), 'nothing reserved or charged').to.deep.equal(before);
    expect(env().sim.log.entries.filter((e) => e.path === '/v1/chat/completions').length, 'the refused request reached no upstream').to.equal(1);

    expect((await req('PATCH', `/billing/wallets/${w.id}`, { credits_bound: reserved })).status).to.equal(200);
    const served = await decide(o.key, validBody());
    expect(served.status, served.text).to.equal(200);
  });

  it('aggregates usage events by org, model and day', async () => {
    const a = await buildOrg(env().redis);
    const b = await buildOrg(env().redis);
    const model = `stats-${crypto.randomBytes(4).toString('hex')}`;
    dated.push(model);
    const rows: Array<[string, number, number, string]> = [
      [a.org.id, 10, 5, '2026-01-01T10:00:00Z'],
      [a.org.id, 20, 7, '2026-01-01T11:00:00Z'],
      [a.org.id, 1, 1, '2026-01-02T11:00:00Z'],
      [b.org.id, 100, 50, '2026-01-02T12:00:00Z'],
    ];
    for (const [orgId, input, output, at] of rows) {
      const e = await UsageEvent.create({ requestId: `req_${crypto.randomBytes(10).toString('hex')}`, orgId, projectId: null, apiKeyId: null, model, modality: 'chat', lane: 'interactive', inputTokens: input, outputTokens: output });
      await db().query('UPDATE usage_events SET created_at = :at WHERE id = :id', { replacements: { at, id: e.id } });
    }
    const byOrg = await req('GET', `/usage-stats?group_by=org&model=${model}`);
    expect(byOrg.status, byOrg.text).to.equal(200);
    const mine = byOrg.body.data.find((r: { org_id: string }) => r.org_id === a.org.id);
    expect(mine).to.include({ requests: 3, input_tokens: 31, output_tokens: 13 });
    const byDay = await req('GET', `/usage-stats?group_by=day,model&model=${model}&org_id=${a.org.id}`);
    expect(byDay.body.data).to.deep.equal([
      { day: '2026-01-01', model, requests: 2, input_tokens: 30, output_tokens: 12, audio_duration_ms: 0, passthrough_requests: 0 },
      { day: '2026-01-02', model, requests: 1, input_tokens: 1, output_tokens: 1, audio_duration_ms: 0, passthrough_requests: 0 },
    ]);
    const window = await req('GET', `/usage-stats?group_by=model&model=${model}&from=2026-01-02T00:00:00Z&to=2026-01-03T00:00:00Z`);
    expect(window.body.data).to.deep.equal([{ model, requests: 2, input_tokens: 101, output_tokens: 51, audio_duration_ms: 0, passthrough_requests: 0 }]);
    for (const bad of ['group_by=planet', 'from=yesterday', 'org_id=nope', 'limit=0']) {
      const r = await req('GET', `/usage-stats?${bad}`);
      expect(r.status, bad).to.equal(400);
      expect(r.body.error.code).to.equal('invalid_request');
    }
    const stats = await req('GET', '/stats');
    expect(stats.status).to.equal(200);
    expect(stats.body.organizations).to.be.greaterThan(1);
    expect(stats.body.usage).to.have.keys(['requests', 'input_tokens', 'output_tokens', 'active_organizations']);
  });

  it('stores platform credentials encrypted, never returns them, and the worker decrypts the current one', async () => {
    const provider = await Provider.create({ name: `cred-${Date.now()}`, kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEncrypted: null });
    const secret = `sk-live-${crypto.randomBytes(8).toString('hex')}`;
    const r = await req('POST', '/platform-credentials', { provider_id: provider.id, secret });
    expect(r.status).to.equal(201);
    expect(r.body.secret_hint).to.equal(secret.slice(-4));
    const entry = await waitFor(() => AuditLog.findOne({ where: { targetId: r.body.id } }));
    expect(entry!.fields).to.deep.equal(['provider_id', 'secret']); // names only, never values
    expect(JSON.stringify(entry)).not.to.include(secret);
    const badJson = await fetch(`${admin.url}/admin/v1/platform-credentials`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: `{"secret":"${secret}"` });
    expect(badJson.status).to.equal(400);
    const badText = await badJson.text();
    expect(JSON.parse(badText).error.code).to.equal('invalid_json');
    expect(badText).not.to.include(secret);
    expect(r.text).not.to.include(secret);
    expect((await req('GET', '/platform-credentials?limit=200')).text).not.to.include(secret);
    const row = await PlatformCredential.findByPk(r.body.id);
    expect(row!.secretEncrypted).to.match(/^v1\./).and.not.include(secret);
    expect(platformCredentialNow(provider.id)).to.equal(undefined); // not loaded yet: the worker awaits it
    expect(await platformCredential(provider.id)).to.equal(secret);
    expect(platformCredentialNow(provider.id)).to.deep.equal({ key: secret }); // loaded: at hand without an await
    const bare = await Provider.create({ name: `nocred-${Date.now()}`, kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEncrypted: null });
    expect(await platformCredential(bare.id)).to.equal(undefined);
    expect(platformCredentialNow(bare.id)).to.deep.equal({ key: undefined }); // "no credential" is an answer too
  });
});
