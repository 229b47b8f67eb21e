import crypto from 'crypto';
import { expect } from 'chai';
import { execFile } from 'child_process';
import path from 'path';
import { promisify } from 'util';
import { adminSuite } from '../../helpers/admin';
import { Organization } from '../../../shared/db/models';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../../scripts/cli.js');

describe('admin API: an organization slug derived from its name', () => {
  const admin = adminSuite();

  it('derives the slug the CLI derives when the body omits it, and keeps a given one', async () => {
    const tag = crypto.randomBytes(4).toString('hex');
    const name = `Acme Robotics, Inc. ${tag}`;
    const r = await admin.call('POST', '/admin/v1/organizations', { name });
    expect(r.status).to.equal(201);
    expect(r.body.slug).to.equal(`acme-robotics-inc-${tag}`);
    expect((await Organization.findByPk(r.body.id))!.slug).to.equal(r.body.slug);

    // the same name through `gateway org create` gives the same slug (a clash, since the first is taken)
    const cliName = `Über  Café -- ${tag}!`;
    const viaCli = JSON.parse((await run(process.execPath, [cli, 'org', 'create', cliName, '--json'], { env: process.env })).stdout);
    const viaApi = await admin.call('POST', '/admin/v1/organizations', { name: `${cliName} ` });
    expect(viaCli.slug).to.equal(`ber-caf-${tag}`);
    expect(viaApi.status).to.equal(409);
    expect(viaApi.body.error.code).to.equal('already_exists');

    const given = await admin.call('POST', '/admin/v1/organizations', { name, slug: `custom-${tag}` });
    expect(given.status).to.equal(201);
    expect(given.body.slug).to.equal(`custom-${tag}`);
  });

  it('still refuses a body without a name (400, nothing created)', async () => {
    const before = await Organization.count();
    const r = await admin.call('POST', '/admin/v1/organizations', {});
    expect(r.status).to.equal(400);
    expect(r.body.error.code).to.be.a('string');
    expect(r.body.error.message).to.match(/name/);
    expect(await Organization.count()).to.equal(before);
  });
});
