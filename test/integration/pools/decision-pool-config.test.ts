import { expect } from 'chai';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { env } from '../../helpers/harness';
import { poolModel, rndId, simDeployment } from '../../helpers/pool-models';
import { Model, Provider } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { importCatalog, upsertProvider } from '../../../shared/catalog/catalog-ops';

const LIMITS = { max_state_bytes: 10_000, max_request_bytes: 100_000, max_questions: 8, max_input_tokens: 10_000 };

/** A decision model's pool takes only deployments a decision call can use, whichever write would change that. */
describe('model pools: what a decision model\'s deployments may be', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  let key: string;
  const names: Record<string, string> = {};
  const made: string[] = [];
  const req = (method: string, p: string, json?: unknown) => adminCall(admin.url, key, method, `/admin/v1${p}`, json);
  /** The management API's error shape: `{error: {code, message}}`. */
  const expectInvalid = (r: { status: number; text: string; body: { error: { code: string; message: string } } }, ...says: string[]) => {
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error.code).to.equal('invalid_request');
    for (const s of says) expect(r.body.error.message).to.include(s);
  };

  before(async () => {
    admin = await startAdmin();
    ({ key } = await buildPlatformKey());
    const sim = env().simUrl;
    for (const [kind, extra] of [
      ['gemini', {}],
      ['anthropic', {}],
      ['cohere', {}],
      ['bedrock', { region: 'eu-west-1' }],
      ['azure', { api_version: '2024-10-21' }],
      ['azure-old', { api_version: '2024-06-01' }],
      ['openai', {}],
    ] as const) {
      names[kind] = `dk-${kind}-${rndId()}`;
      await upsertProvider({ name: names[kind], kind: kind === 'azure-old' ? 'azure' : kind, base_url: sim, api_key: 'k', ...extra });
    }
  });
  after(async () => {
    await Model.destroy({ where: { publicId: made } });
    await bumpEpoch(env().redis);
    await admin.close();
  });

  it('the catalog file refuses a decision model with a gemini, anthropic, bedrock or cohere deployment, or an Azure API version without structured outputs', async () => {
    for (const kind of ['gemini', 'anthropic', 'bedrock', 'cohere', 'azure-old']) {
      const id = `dk-${rndId()}`;
      const deployments = [simDeployment('ok'), { name: 'bad', provider: names[kind], upstream: 'x' }];
      const err = await importCatalog(env().redis, { models: [{ id, capabilities: { decision: true }, limits: LIMITS, deployments }] }).catch((e: Error) => e);
      expect(err, kind).to.be.instanceOf(Error);
      expect((err as Error).message, kind).to.include(names[kind]);
      expect(await Model.findOne({ where: { publicId: id } }), kind).to.equal(null);
    }
    // the same pools are fine for a chat model, and openai + azure for a decision model
    const chat = `dk-${rndId()}`;
    const decision = `dk-${rndId()}`;
    made.push(chat, decision);
    await importCatalog(env().redis, {
      models: [
        { id: chat, capabilities: { chat: true }, deployments: [{ name: 'g', provider: names.gemini, upstream: 'x' }] },
        { id: decision, capabilities: { decision: true }, limits: LIMITS, deployments: [{ name: 'o', provider: names.openai, upstream: 'x' }, { name: 'a', provider: names.azure, upstream: 'x' }] },
      ],
    });
    expect((await Model.findOne({ where: { publicId: decision } }))!.deployments.map((d) => d.name)).to.deep.equal(['o', 'a']);
  });

  it('the management API answers 400 invalid_request to a pool, a primary or a capability that would give a decision model such a deployment, and keeps the model as it was', async () => {
    const decision = await poolModel([simDeployment('a')], { capabilities: { decision: true }, limits: LIMITS });
    const chat = await poolModel([{ name: 'g', provider: names.gemini, upstream: 'x' }]);
    made.push(decision, chat);
    const decisionRow = (await Model.findOne({ where: { publicId: decision } }))!;
    const chatRow = (await Model.findOne({ where: { publicId: chat } }))!;
    const before = decisionRow.deployments;

    for (const kind of ['gemini', 'anthropic', 'bedrock', 'cohere', 'azure-old']) {
      const deployments = [simDeployment('a'), { name: 'b', provider: names[kind], upstream: 'x' }];
      expectInvalid(await req('POST', '/inference-model-pools', { model: decision, deployments }), names[kind]);
      expectInvalid(await req('PATCH', `/inference-model-pools/${decisionRow.id}`, { deployments }), names[kind]);
      expectInvalid(await req('PATCH', `/inference-models/${decisionRow.id}`, { deployments }), names[kind]);
    }
    const anthropic = await Provider.findOne({ where: { name: names.anthropic } });
    expectInvalid(await req('PATCH', `/inference-models/${decisionRow.id}`, { provider_id: anthropic!.id, upstream_name: 'x' }), names.anthropic);
    expectInvalid(await req('PATCH', `/inference-models/${chatRow.id}`, { capabilities: { decision: true } }), names.gemini);
    const created = await req('POST', '/inference-models', { public_id: `dk-${rndId()}`, provider_id: anthropic!.id, upstream_name: 'x', capabilities: { decision: true } });
    expectInvalid(created, names.anthropic);
    expect((await Model.findByPk(decisionRow.id))!.deployments).to.deep.equal(before);
    expect((await Model.findByPk(chatRow.id))!.capabilities).to.deep.equal({ chat: true, vision: true });

    const ok = await req('PATCH', `/inference-model-pools/${decisionRow.id}`, { deployments: [simDeployment('a'), { name: 'az', provider: names.azure, upstream: 'x' }] });
    expect(ok.status, ok.text).to.equal(200);
  });

  it("a provider serving a decision model keeps a kind and an Azure API version decision calls can use (400 naming the model)", async () => {
    const openai = `dk-openai-${rndId()}`;
    const azure = `dk-azure-${rndId()}`;
    await upsertProvider({ name: openai, kind: 'openai', base_url: env().simUrl, api_key: 'k' });
    await upsertProvider({ name: azure, kind: 'azure', base_url: env().simUrl, api_key: 'k', api_version: '2024-10-21' });
    const decision = await poolModel([{ name: 'o', provider: openai, upstream: 'x' }, { name: 'a', provider: azure, upstream: 'x' }], { capabilities: { decision: true }, limits: LIMITS });
    made.push(decision);
    const [o, a] = await Promise.all([Provider.findOne({ where: { name: openai } }), Provider.findOne({ where: { name: azure } })]);
    expectInvalid(await req('PATCH', `/providers/${o!.id}`, { kind: 'gemini' }), decision);
    expectInvalid(await req('PATCH', `/providers/${a!.id}`, { settings: { api_version: '2024-06-01' } }), decision, '2024-06-01');
    const fromFile = await importCatalog(env().redis, { providers: [{ name: openai, kind: 'anthropic', base_url: env().simUrl }] }).catch((e: Error) => e);
    expect(fromFile).to.be.instanceOf(Error);
    expect((fromFile as Error).message).to.include(decision);
    expect((await Provider.findByPk(o!.id))!.kind).to.equal('openai');
    expect((await Provider.findByPk(a!.id))!.settings).to.deep.equal({ api_version: '2024-10-21' });
    const newer = await req('PATCH', `/providers/${a!.id}`, { settings: { api_version: 'v1' } });
    expect(newer.status, newer.text).to.equal(200);
  });
});
