import crypto from 'crypto';
import fs from 'fs';
import os from 'os';
import path from 'path';
import { expect } from 'chai';
import { execFile } from 'child_process';
import { promisify } from 'util';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { AuditLog, Model } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { env } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';
import { poolModel, simDeployment } from '../../helpers/pool-models';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../../scripts/cli.js');
const gateway = (...args: string[]) => run(process.execPath, [cli, ...args], { env: process.env });
const rnd = () => crypto.randomBytes(4).toString('hex');

function catalogFile(doc: unknown): string {
  const file = path.join(os.tmpdir(), `pool-catalog-${rnd()}.json`);
  fs.writeFileSync(file, JSON.stringify(doc));
  return file;
}

describe('model pools: catalog file, CLI and management API', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  let key: string;
  let keyId: string;
  before(async () => {
    admin = await startAdmin();
    ({ key, id: keyId } = await buildPlatformKey());
  });
  after(() => admin.close());

  it('imports deployments and fallbacks, lists them, and refuses a model with both forms or an unknown provider', async function () {
    this.timeout(30_000);
    const id = `pooled-${rnd()}`;
    const file = catalogFile({
      models: [
        {
          id,
          capabilities: { chat: true },
          deployments: [
            { name: 'east', provider: 'simulator', upstream: 'sim-chat-1', weight: 3, priority: 0, rpm: 600, max_concurrency: 4 },
            { name: 'west', provider: 'simulator-anthropic', upstream: 'sim-claude-1', weight: 1, tpm: 90000 },
          ],
          fallbacks: ['sim-chat-mini'],
        },
      ],
    });
    expect((await gateway('catalog', 'import', file)).stdout).to.include('1 model(s)');
    const row = await Model.findOne({ where: { publicId: id } });
    expect(row!.deployments.map((d) => d.name)).to.deep.equal(['east', 'west']);
    expect(row!.upstreamName, 'the first deployment is the primary').to.equal('sim-chat-1');
    expect(row!.fallbacks).to.deep.equal(['sim-chat-mini']);

    const listed = (await gateway('catalog', 'list')).stdout;
    const block = listed.slice(listed.indexOf(id));
    expect(block).to.match(/deployments: east \(simulator\/sim-chat-1 weight=3 priority=0 rpm=600 max_concurrency=4\), west \(simulator-anthropic\/sim-claude-1 weight=1 tpm=90000\)/);
    expect(block).to.match(/fallbacks: sim-chat-mini/);
    expect(listed, 'a single-upstream model is a pool of one').to.match(/sim-chat-mini[\s\S]*?deployments: simulator \(simulator\/sim-chat-mini-1\)/);

    for (const bad of [
      { id, capabilities: { chat: true }, provider: 'simulator', upstream: 'x', deployments: [{ name: 'a', provider: 'simulator', upstream: 'x' }] },
      { id, capabilities: { chat: true }, deployments: [{ name: 'a', provider: 'nowhere', upstream: 'x' }] },
      { id, capabilities: { chat: true }, deployments: [{ name: 'a', provider: 'simulator', upstream: 'x' }, { name: 'a', provider: 'simulator', upstream: 'y' }] },
    ]) {
      try {
        await gateway('catalog', 'import', catalogFile({ models: [bad] }));
        expect.fail(`refused: ${JSON.stringify(bad)}`);
      } catch (err) {
        expect((err as { stderr: string }).stderr).to.match(/invalid catalog file|unknown provider 'nowhere'/);
      }
    }
    expect((await Model.findOne({ where: { publicId: id } }))!.deployments).to.have.length(2);
  });

  it('serves pools at /admin/v1/inference-model-pools and on the model record; writes are checked and audited', async () => {
    const model = await Model.findOne({ where: { publicId: 'sim-chat' } });
    const req = (method: string, p: string, json?: unknown) => adminCall(admin.url, key, method, `/admin/v1${p}`, json);
    const list = await req('GET', '/inference-model-pools?model=sim-chat');
    expect(list.status).to.equal(200);
    expect(list.body.data).to.have.length(1);
    expect(list.body.data[0]).to.deep.include({ id: model!.id, object: 'inference_model_pool', model: 'sim-chat', fallbacks: [] });
    expect(list.body.data[0].deployments).to.deep.equal([{ name: 'simulator', provider: 'simulator', upstream: 'sim-chat-1' }]);

    const deployments = [
      { name: 'a', provider: 'simulator', upstream: 'sim-chat-1', weight: 2 },
      { name: 'b', provider: 'simulator', upstream: 'sim-chat-2', priority: 1 },
    ];
    const bad = await req('PATCH', `/inference-model-pools/${model!.id}`, { deployments: [{ name: 'a', provider: 'nowhere', upstream: 'x' }] });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.message).to.include('nowhere');
    expect((await req('PATCH', `/inference-model-pools/${model!.id}`, { fallbacks: ['no-such-model'] })).status).to.equal(400);
    expect((await req('PATCH', `/inference-model-pools/${model!.id}`, { fallbacks: ['sim-chat'] })).status).to.equal(400);
    expect((await req('POST', '/inference-model-pools', { model: 'sim-chat' })).status, 'deployments are required').to.equal(400);
    expect((await req('POST', '/inference-model-pools', { model: 'no-such-model', deployments })).status).to.equal(404);
    try {
      const ok = await req('PATCH', `/inference-model-pools/${model!.id}`, { deployments, fallbacks: ['sim-chat-mini'] });
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.body).to.deep.include({ deployments, fallbacks: ['sim-chat-mini'] });
      const own = await req('GET', `/inference-models/${model!.id}`);
      expect(own.body).to.deep.include({ deployments, fallbacks: ['sim-chat-mini'], upstream_name: 'sim-chat-1' });
      expect(await waitFor(async () => (await AuditLog.findAll({ where: { targetId: model!.id, actorId: keyId, method: 'PATCH' } })).some((a) => a.family === 'inference-models'))).to.equal(true);

      // DELETE makes it a pool of one again (the model stays); POST sets a model's pool by its public id
      const del = await req('DELETE', `/inference-model-pools/${model!.id}`);
      expect(del.status, del.text).to.equal(200);
      expect((await req('GET', `/inference-model-pools/${model!.id}`)).body).to.deep.include({ deployments: [deployments[0]], fallbacks: [] });
      const created = await req('POST', '/inference-model-pools', { model: 'sim-chat', deployments: [...deployments].reverse(), fallbacks: ['sim-claude'] });
      expect(created.status, created.text).to.equal(201);
      expect(created.body).to.deep.include({ id: model!.id, model: 'sim-chat', fallbacks: ['sim-claude'] });
      expect((await Model.findByPk(model!.id))!.upstreamName, 'the first deployment is the primary').to.equal('sim-chat-2');
      for (const method of ['DELETE', 'POST']) {
        // the audit row is written when the response finishes
        expect(await waitFor(async () => (await AuditLog.count({ where: { targetId: model!.id, actorId: keyId, method } })) === 1), method).to.equal(true);
      }
    } finally {
      await Model.update({ deployments: [{ name: 'simulator', provider: 'simulator', upstream: 'sim-chat-1' }], fallbacks: [], upstreamName: 'sim-chat-1' }, { where: { id: model!.id } });
      await bumpEpoch(env().redis);
    }
  });

  it('refuses to delete a provider that a pool deployment (not the primary) names, with 409 resource_in_use naming the model', async () => {
    const req = (method: string, p: string, json?: unknown) => adminCall(admin.url, key, method, `/admin/v1${p}`, json);
    const provider = await req('POST', '/providers', { name: `second-${rnd()}`, kind: 'openai', base_url: 'http://127.0.0.1:9/v1' });
    expect(provider.status, provider.text).to.equal(201);
    const a = simDeployment('a');
    const model = await poolModel([a, { name: 'b', provider: provider.body.name, upstream: 'b-1' }]);
    const refused = await req('DELETE', `/providers/${provider.body.id}`);
    expect(refused.status, refused.text).to.equal(409);
    expect(refused.body.error.code).to.equal('resource_in_use');
    expect(refused.body.error.message).to.include(model);
    expect((await req('GET', `/providers/${provider.body.id}`)).status, 'the provider stays').to.equal(200);
    // once no deployment names it, it goes
    const id = (await Model.findOne({ where: { publicId: model } }))!.id;
    expect((await req('PATCH', `/inference-model-pools/${id}`, { deployments: [a] })).status).to.equal(200);
    const deleted = await req('DELETE', `/providers/${provider.body.id}`);
    expect(deleted.status, deleted.text).to.equal(200);
  });

  it('refuses to rename a provider that a pool deployment names (the same guard as delete); renames it once none does', async () => {
    const req = (method: string, p: string, json?: unknown) => adminCall(admin.url, key, method, `/admin/v1${p}`, json);
    const name = `named-${rnd()}`;
    const provider = await req('POST', '/providers', { name, kind: 'openai', base_url: 'http://127.0.0.1:9/v1' });
    expect(provider.status, provider.text).to.equal(201);
    const a = simDeployment('a');
    const model = await poolModel([a, { name: 'b', provider: name, upstream: 'b-1' }]);
    const refused = await req('PATCH', `/providers/${provider.body.id}`, { name: `${name}-new` });
    expect(refused.status, refused.text).to.equal(409);
    expect(refused.body.error.code).to.equal('resource_in_use');
    expect(refused.body.error.message).to.include(model);
    expect((await req('GET', `/providers/${provider.body.id}`)).body.name, 'the name stays').to.equal(name);
    expect((await req('PATCH', `/providers/${provider.body.id}`, { base_url: 'http://127.0.0.1:10/v1' })).status, 'other fields still change').to.equal(200);
    const id = (await Model.findOne({ where: { publicId: model } }))!.id;
    expect((await req('PATCH', `/inference-model-pools/${id}`, { deployments: [a] })).status).to.equal(200);
    const renamed = await req('PATCH', `/providers/${provider.body.id}`, { name: `${name}-new` });
    expect(renamed.status, renamed.text).to.equal(200);
    expect(renamed.body.name).to.equal(`${name}-new`);
  });
});
