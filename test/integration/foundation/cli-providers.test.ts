import { expect } from 'chai';
import { execFile } from 'child_process';
import path from 'path';
import { promisify } from 'util';
import fs from 'fs';
import os from 'os';
import { Provider } from '../../../shared/db/models';
import { passthroughAllowed } from '../../../shared/catalog/passthrough';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../../scripts/cli.js');
const gateway = (...args: string[]) => run(process.execPath, [cli, ...args], { env: process.env });

/** `gateway provider add` takes every kind's fields (docs/providers.md). */
describe('operator CLI: provider add for every kind', () => {
  after(async () => {
    await Provider.destroy({ where: { name: ['cli-azure', 'cli-bedrock', 'cli-groq', 'cli-nourl', 'cli-vllm', 'cli-open', 'cli-file'] } });
  });

  it('stores azure api_version, bedrock region without a URL, and a preset that fills the URL; the key stays encrypted', async function () {
    this.timeout(30_000);
    await gateway('provider', 'add', '--name', 'cli-azure', '--kind', 'azure', '--base-url', 'https://res.openai.azure.com', '--api-version', '2024-10-21', '--api-key', 'az-secret-1234');
    await gateway('provider', 'add', '--name', 'cli-bedrock', '--kind', 'bedrock', '--region', 'eu-west-1', '--api-key', 'ABSK-secret');
    await gateway('provider', 'add', '--name', 'cli-groq', '--kind', 'openai', '--preset', 'groq');
    const rows = await Provider.findAll({ where: { name: ['cli-azure', 'cli-bedrock', 'cli-groq'] }, order: [['name', 'ASC']] });
    const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
    expect(byName['cli-azure'].settings).to.deep.equal({ api_version: '2024-10-21' });
    expect(byName['cli-azure'].apiKeyEncrypted).to.be.a('string').and.not.include('az-secret');
    expect(byName['cli-bedrock'].settings).to.deep.equal({ region: 'eu-west-1' });
    expect(byName['cli-groq'].settings).to.deep.equal({ preset: 'groq' });
    expect(byName['cli-groq'].baseUrl).to.match(/^https:\/\/api\.groq\.com/);
  });

  it('refuses an azure provider without --api-version, and an openai provider with neither URL nor preset', async function () {
    this.timeout(30_000);
    const failure = (...args: string[]) => gateway(...args).then(() => '', (e: { stderr: string }) => e.stderr);
    expect(await failure('provider', 'add', '--name', 'cli-nourl', '--kind', 'azure', '--base-url', 'https://res.openai.azure.com')).to.include('api_version');
    expect(await failure('provider', 'add', '--name', 'cli-nourl', '--kind', 'openai')).to.include('base_url');
    expect(await Provider.count({ where: { name: 'cli-nourl' } })).to.equal(0);
  });

  it('sets passthrough with --passthrough / --no-passthrough and in a catalog file; omitted, the default of the kind and preset', async function () {
    this.timeout(30_000);
    const stored = async (name: string) => {
      const row = (await Provider.findOne({ where: { name } }))!;
      return [row.passthrough, passthroughAllowed(row)];
    };
    await gateway('provider', 'add', '--name', 'cli-vllm', '--kind', 'openai', '--preset', 'vllm', '--base-url', 'http://10.0.0.5:8000/v1');
    expect(await stored('cli-vllm'), 'vllm: refused by default').to.deep.equal([null, false]);
    await gateway('provider', 'add', '--name', 'cli-vllm', '--kind', 'openai', '--preset', 'vllm', '--base-url', 'http://10.0.0.5:8000/v1', '--passthrough');
    expect(await stored('cli-vllm')).to.deep.equal([true, true]);
    await gateway('provider', 'add', '--name', 'cli-open', '--kind', 'openai', '--base-url', 'http://10.0.0.6:8000/v1');
    expect(await stored('cli-open'), 'a server of the operator\'s: refused by default').to.deep.equal([null, false]);
    await gateway('provider', 'add', '--name', 'cli-vendor', '--kind', 'openai', '--base-url', 'https://api.openai.com/v1');
    expect(await stored('cli-vendor'), "OpenAI's own host: allowed by default").to.deep.equal([null, true]);
    await gateway('provider', 'add', '--name', 'cli-open', '--kind', 'openai', '--base-url', 'http://10.0.0.6:8000/v1', '--no-passthrough');
    expect(await stored('cli-open')).to.deep.equal([false, false]);

    const file = path.join(os.tmpdir(), `catalog-passthrough-${Date.now()}.json`);
    const importing = (passthrough: unknown) => {
      fs.writeFileSync(file, JSON.stringify({ providers: [{ name: 'cli-file', kind: 'openai', preset: 'ollama', passthrough }] }));
      return gateway('catalog', 'import', file).then(() => '', (e: { stderr: string }) => e.stderr);
    };
    expect(await importing(false)).to.equal('');
    expect(await stored('cli-file')).to.deep.equal([false, false]);
    expect(await importing(true)).to.equal('');
    expect(await stored('cli-file')).to.deep.equal([true, true]);
    expect(await importing('sometimes')).to.include('"providers[0].passthrough" must be a boolean');
    expect(await stored('cli-file'), 'an invalid file writes nothing').to.deep.equal([true, true]);
  });
});
