import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { poolModel, rndId, simDeployment } from '../../helpers/pool-models';
import { Model } from '../../../shared/db/models';

/** Whitespace runs: r50k_base spends a token on almost every space, o200k_base merges them. */
const TEXT = '                                def f():\n        return 1  ';

describe('tokenizer profiles: a model names a profile and counting uses its encoding', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  let key: string;
  let o: TestOrg;
  before(async () => {
    admin = await startAdmin();
    ({ key } = await buildPlatformKey());
    o = await buildOrg(env().redis);
  });
  after(() => admin.close());

  const count = async (model: string) => {
    const r = await call('POST', '/v1/messages/count_tokens', { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' }, json: { model, messages: [{ role: 'user', content: TEXT }] } });
    expect(r.status, r.text).to.equal(200);
    return r.body.input_tokens as number;
  };

  it('counts with the profile’s encoding, and refuses a tokenizer that is neither an encoding nor a profile', async () => {
    const model = await poolModel([simDeployment('t')]);
    const row = (await Model.findOne({ where: { publicId: model } }))!;
    const base = await count(model); // o200k_base, the default
    const profile = `legacy-${rndId()}`;
    const made = await adminCall(admin.url, key, 'POST', '/admin/v1/inference-tokenizer-profiles', { name: profile, encoding: 'r50k_base' });
    expect(made.status, made.text).to.equal(201);
    const bad = await adminCall(admin.url, key, 'PATCH', `/admin/v1/inference-models/${row.id}`, { tokenizer: 'no-such-profile' });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.message).to.include('no-such-profile');
    const set = await adminCall(admin.url, key, 'PATCH', `/admin/v1/inference-models/${row.id}`, { tokenizer: profile });
    expect(set.status, set.text).to.equal(200);
    const legacy = await count(model);
    expect(legacy, 'r50k_base counts the whitespace run token by token').to.be.above(base + 20);
    // the profile moves to another encoding: the model follows it
    const p = (await adminCall(admin.url, key, 'GET', `/admin/v1/inference-tokenizer-profiles?name=${profile}`)).body.data[0];
    expect((await adminCall(admin.url, key, 'PATCH', `/admin/v1/inference-tokenizer-profiles/${p.id}`, { encoding: 'o200k_base' })).status).to.equal(200);
    expect(await count(model)).to.equal(base);
  });
});
