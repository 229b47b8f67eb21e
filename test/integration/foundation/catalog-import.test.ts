import { expect } from 'chai';
import { execFile } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';
import { promisify } from 'util';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { Model, Provider } from '../../../shared/db/models';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../../scripts/cli.js');

describe('pointing a model at an upstream with a catalog file', () => {
  beforeEach(resetSim);

  it('imports a provider and model, serves it with the encrypted platform credential', async function () {
    this.timeout(30_000);
    const file = path.join(os.tmpdir(), `catalog-${Date.now()}.json`);
    fs.writeFileSync(
      file,
      JSON.stringify({
        providers: [{ name: 'imported', kind: 'openai', base_url: `${env().simUrl}/v1`, api_key: 'sk-platform-secret' }],
        models: [{ id: 'imported-chat', provider: 'imported', upstream: 'upstream-xyz', capabilities: { chat: true }, context_window: 8000 }],
      }),
    );
    const out = await run(process.execPath, [cli, 'catalog', 'import', file], { env: process.env });
    expect(out.stdout).to.include('imported 1 provider(s), 1 model(s)');
    const row = await Provider.findOne({ where: { name: 'imported' } });
    expect(row!.apiKeyEncrypted).to.be.a('string').and.not.include('sk-platform-secret');

    const o = await buildOrg(env().redis);
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'imported-chat', messages: [{ role: 'user', content: 'hi' }] } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.model).to.equal('imported-chat');
    const seen = env().sim.log.entries[0];
    expect(seen.model).to.equal('upstream-xyz');
    expect(seen.authorization).to.equal('Bearer sk-platform-secret');
  });

  it('rejects an invalid catalog file without writing anything', async () => {
    const file = path.join(os.tmpdir(), `catalog-bad-${Date.now()}.json`);
    fs.writeFileSync(file, JSON.stringify({ providers: [{ name: 'bad', kind: 'nope', base_url: 'x' }], models: [] }));
    try {
      await run(process.execPath, [cli, 'catalog', 'import', file], { env: process.env });
      expect.fail('should exit non-zero');
    } catch (err) {
      expect((err as { stderr: string }).stderr, "the reason, not only the heading").to.match(/invalid catalog file: "providers\[0\]\.kind" must be one of/);
    }
    expect(await Provider.findOne({ where: { name: 'bad' } })).to.equal(null);
  });

  it('refuses a file whose models name a fallback or provider that neither the file nor the catalog holds, before writing anything', async () => {
    const stamp = Date.now();
    const provider = { name: `dangling-${stamp}`, kind: 'openai', base_url: `${env().simUrl}/v1` };
    const model = (extra: Record<string, unknown>) => ({ id: `dangling-model-${stamp}`, capabilities: { chat: true }, ...extra });
    const cases: [unknown, RegExp][] = [
      [{ providers: [provider], models: [model({ provider: provider.name, upstream: 'u', fallbacks: ['sim-chat', `no-such-model-${stamp}`] })] }, /unknown fallback model 'no-such-model-\d+'/],
      [{ providers: [provider], models: [model({ provider: provider.name, upstream: 'u', fallbacks: [`dangling-model-${stamp}`] })] }, /cannot be its own fallback/],
      [{ providers: [provider], models: [model({ deployments: [{ name: 'a', provider: provider.name, upstream: 'u' }, { name: 'b', provider: `nowhere-${stamp}`, upstream: 'u' }] })] }, /unknown provider 'nowhere-\d+'/],
    ];
    for (const [doc, message] of cases) {
      const file = path.join(os.tmpdir(), `catalog-dangling-${stamp}.json`);
      fs.writeFileSync(file, JSON.stringify(doc));
      try {
        await run(process.execPath, [cli, 'catalog', 'import', file], { env: process.env });
        expect.fail('should exit non-zero');
      } catch (err) {
        expect((err as { stderr: string }).stderr).to.match(/invalid catalog file/).and.to.match(message);
      }
      expect(await Provider.findOne({ where: { name: provider.name } }), 'the provider ahead of the model is not written').to.equal(null);
      expect(await Model.findOne({ where: { publicId: `dangling-model-${stamp}` } })).to.equal(null);
    }
    // a fallback named by a model later in the same file, and one in the catalog, are fine
    const file = path.join(os.tmpdir(), `catalog-ok-${stamp}.json`);
    const later = { id: `later-${stamp}`, provider: provider.name, upstream: 'v', capabilities: { chat: true } };
    fs.writeFileSync(file, JSON.stringify({ providers: [provider], models: [model({ provider: provider.name, upstream: 'u', fallbacks: [later.id, 'sim-chat'] }), later] }));
    await run(process.execPath, [cli, 'catalog', 'import', file], { env: process.env });
    expect((await Model.findOne({ where: { publicId: `dangling-model-${stamp}` } }))!.fallbacks).to.deep.equal([later.id, 'sim-chat']);
    await Model.destroy({ where: { publicId: [`dangling-model-${stamp}`, later.id] } });
    await Provider.destroy({ where: { name: provider.name } });
  });
});
