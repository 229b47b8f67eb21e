import { expect } from 'chai';
import { execFile } from 'child_process';
import path from 'path';
import { promisify } from 'util';
import { Provider } from '../../../shared/db/models';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../../scripts/cli.js');
const gateway = (...args: string[]) => run(process.execPath, [cli, ...args], { env: process.env });

/** `gateway provider add` takes every kind's fields (docs/providers.md). */
describe('operator CLI: provider add for every kind', () => {
  after(async () => {
    await Provider.destroy({ where: { name: ['cli-azure', 'cli-bedrock', 'cli-groq', 'cli-nourl'] } });
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
});
