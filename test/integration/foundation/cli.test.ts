import { expect } from 'chai';
import { execFile } from 'child_process';
import path from 'path';
import { promisify } from 'util';
import { env } from '../../helpers/harness';
import { call, keyHeader } from '../../helpers/http';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../../scripts/cli.js');
const gateway = (...args: string[]) => run(process.execPath, [cli, ...args], { env: process.env });

describe('operator CLI (npx gateway)', () => {
  it('creates an org and a key that works, lists it, revokes it', async function () {
    this.timeout(30_000);
    const slug = `cli-${Date.now()}`;
    const org = JSON.parse((await gateway('org', 'create', 'CLI Org', '--slug', slug, '--plan', 'pro', '--json')).stdout);
    expect(org.slug).to.equal(slug);
    const key = JSON.parse((await gateway('key', 'create', '--org', slug, '--json')).stdout);
    expect(key.key).to.match(/^svc_/);
    expect((await call('GET', '/v1/models', { headers: keyHeader(key.key) })).status).to.equal(200);
    const listed = JSON.parse((await gateway('key', 'list', '--org', slug, '--json')).stdout);
    expect(listed.map((k: { id: string }) => k.id)).to.deep.equal([key.id]);
    expect(JSON.stringify(listed)).not.to.include(key.key); // the raw key is never shown again
    await gateway('key', 'revoke', key.id);
    expect((await call('GET', '/v1/models', { headers: keyHeader(key.key) })).status).to.equal(401);
    void env;
  });

  it('fails with a clear message for an unknown org and exits non-zero', async () => {
    try {
      await gateway('key', 'create', '--org', 'no-such-org');
      expect.fail('should exit non-zero');
    } catch (err) {
      expect((err as { stderr: string }).stderr).to.include("unknown org 'no-such-org'");
    }
  });

  it('creates a project-bound key with --project', async function () {
    this.timeout(30_000);
    const slug = `cli-p-${Date.now()}`;
    await gateway('org', 'create', 'CLI P', '--slug', slug);
    const { Project, Organization } = await import('../../../shared/db/models/index.js');
    const o = await Organization.findOne({ where: { slug } });
    await Project.create({ orgId: o!.id, name: 'Web', slug: 'web' });
    const key = JSON.parse((await gateway('key', 'create', '--org', slug, '--project', 'web', '--json')).stdout);
    const p = await Project.findOne({ where: { orgId: o!.id, slug: 'web' } });
    expect(key.projectId).to.equal(p!.id);
  });
});
