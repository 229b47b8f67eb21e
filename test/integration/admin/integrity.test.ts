import crypto from 'crypto';
import { expect } from 'chai';
import { adminSuite } from '../../helpers/admin';
import { buildOrg } from '../../helpers/factories';
import { env } from '../../helpers/harness';
import { call, keyHeader } from '../../helpers/http';
import { poolModel, simDeployment } from '../../helpers/pool-models';
import { Model, User } from '../../../shared/db/models';

const rnd = () => crypto.randomBytes(4).toString('hex');
const models = (key: string) => call('GET', '/v1/models', { headers: keyHeader(key) });

/** Writes that would leave other records pointing at nothing, and writes that race each other. */
describe('management API: referential integrity and racing writes', () => {
  const admin = adminSuite();
  const req = (method: string, path: string, json?: unknown) => admin.call(method, `/admin/v1${path}`, json);

  it('refuses to delete or rename a model another model names as a fallback (409 resource_in_use); deletes it once none does', async () => {
    const target = await poolModel([simDeployment('t')]);
    const user = await poolModel([simDeployment('u')], { fallbacks: [target] });
    const row = (await Model.findOne({ where: { publicId: target } }))!;
    const refused = await req('DELETE', `/inference-models/${row.id}`);
    expect(refused.status, refused.text).to.equal(409);
    expect(refused.body.error.code).to.equal('resource_in_use');
    expect(refused.body.error.message).to.include(user);
    const renamed = await req('PATCH', `/inference-models/${row.id}`, { public_id: `${target}-new` });
    expect(renamed.status, renamed.text).to.equal(409);
    expect(renamed.body.error.code).to.equal('resource_in_use');
    expect((await req('GET', `/inference-models/${row.id}`)).body.public_id, 'the model stays as it was').to.equal(target);
    expect((await req('PATCH', `/inference-models/${row.id}`, { display_name: 'Other fields still change' })).status).to.equal(200);
    const userRow = (await Model.findOne({ where: { publicId: user } }))!;
    expect((await req('PATCH', `/inference-model-pools/${userRow.id}`, { fallbacks: [] })).status).to.equal(200);
    const deleted = await req('DELETE', `/inference-models/${row.id}`);
    expect(deleted.status, deleted.text).to.equal(200);
  });

  it("refuses a new provider_id or upstream_name on a model whose pool has several deployments: the record's primary would no longer be its first deployment", async () => {
    const other = await req('POST', '/providers', { name: `other-${rnd()}`, kind: 'openai', base_url: 'http://127.0.0.1:9/v1' });
    expect(other.status, other.text).to.equal(201);
    const publicId = await poolModel([simDeployment('a'), simDeployment('b')]);
    const row = (await Model.findOne({ where: { publicId } }))!;
    for (const body of [{ provider_id: other.body.id }, { upstream_name: 'elsewhere' }]) {
      const refused = await req('PATCH', `/inference-models/${row.id}`, body);
      expect(refused.status, refused.text).to.equal(400);
      expect(refused.body.error.code).to.equal('invalid_request');
      expect(refused.body.error.param).to.equal(Object.keys(body)[0]);
    }
    const after = (await Model.findByPk(row.id))!;
    expect([after.providerId, after.upstreamName]).to.deep.equal([row.providerId, row.deployments[0].upstream]);
    expect((await req('PATCH', `/inference-models/${row.id}`, { provider_id: row.providerId, upstream_name: row.upstreamName })).status, 'the same values are no change').to.equal(200);
    // a pool of one follows its primary, as before
    const single = (await Model.findOne({ where: { publicId: await poolModel([simDeployment('c')]) } }))!;
    const moved = await req('PATCH', `/inference-models/${single.id}`, { provider_id: other.body.id });
    expect(moved.status, moved.text).to.equal(200);
    expect(moved.body.deployments[0].provider).to.equal(other.body.name);
    // out of the catalog again: a chat model on a provider nothing answers would fail the suites that call every listed model
    expect((await req('DELETE', `/inference-models/${single.id}`)).status).to.equal(200);
  });

  it('refuses to delete or rename a tokenizer profile a model names (409 resource_in_use): its counting would silently become o200k_base', async () => {
    const profile = await req('POST', '/inference-tokenizer-profiles', { name: `tok-${rnd()}`, encoding: 'p50k_base' });
    expect(profile.status, profile.text).to.equal(201);
    const model = await req('POST', '/inference-models', { public_id: `m-${rnd()}`, provider_id: (await Model.findOne({ where: { publicId: 'sim-chat' } }))!.providerId, upstream_name: 'sim-chat', capabilities: { chat: true }, tokenizer: profile.body.name });
    expect(model.status, model.text).to.equal(201);
    const refused = await req('DELETE', `/inference-tokenizer-profiles/${profile.body.id}`);
    expect(refused.status, refused.text).to.equal(409);
    expect(refused.body.error.code).to.equal('resource_in_use');
    expect(refused.body.error.message).to.include(model.body.public_id);
    const renamed = await req('PATCH', `/inference-tokenizer-profiles/${profile.body.id}`, { name: `${profile.body.name}-new` });
    expect(renamed.status, renamed.text).to.equal(409);
    expect((await req('PATCH', `/inference-tokenizer-profiles/${profile.body.id}`, { encoding: 'cl100k_base' })).status, 'its encoding still changes').to.equal(200);
    expect((await req('PATCH', `/inference-models/${model.body.id}`, { tokenizer: 'o200k_base' })).status).to.equal(200);
    expect((await req('DELETE', `/inference-tokenizer-profiles/${profile.body.id}`)).status).to.equal(200);
  });

  it('two rotations of one key at once: each answers a secret that works (the later one, and the earlier one as its previous secret)', async () => {
    for (let round = 0; round < 3; round++) {
      const o = await buildOrg(env().redis);
      const path = `/organizations/${o.org.id}/api-keys/${o.keyId}/rotate`;
      const answers = await Promise.all([req('POST', path, { grace_seconds: 600 }), req('POST', path, { grace_seconds: 600 })]);
      for (const a of answers) expect(a.status, a.text).to.equal(200);
      expect(answers[0].body.key).to.not.equal(answers[1].body.key);
      for (const a of answers) expect((await models(a.body.key)).status, `round ${round}: a secret the API answered`).to.equal(200);
    }
  });

  it('two creations of one project slug at once: one 201, the other 409 project_exists (never a 500)', async () => {
    const o = await buildOrg(env().redis);
    const slug = `p-${rnd()}`;
    const answers = await Promise.all([0, 1, 2].map(() => req('POST', `/organizations/${o.org.id}/projects`, { name: 'Same', slug })));
    expect(answers.map((a) => a.status).sort(), answers.map((a) => a.text).join('\n')).to.deep.equal([201, 409, 409]);
    for (const a of answers.filter((x) => x.status === 409)) expect(a.body.error.code).to.equal('project_exists');
  });

  it('refuses a user whose email differs from an existing one only in letter case (409 already_exists)', async () => {
    const email = `Case-${rnd()}@Example.com`;
    const first = await req('POST', '/users', { email });
    expect(first.status, first.text).to.equal(201);
    const dup = await req('POST', '/users', { email: email.toLowerCase() });
    expect(dup.status, dup.text).to.equal(409);
    expect(dup.body.error.code).to.equal('already_exists');
    expect(await User.count({ where: { email: [email, email.toLowerCase()] } })).to.equal(1);
  });
});
