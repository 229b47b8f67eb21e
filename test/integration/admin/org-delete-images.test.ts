import fs from 'fs/promises';
import path from 'path';
import { expect } from 'chai';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { pngOf } from '../../helpers/images';
import { saveImage } from '../../../shared/images/store';
import { imageStorage } from '../../../shared/storage';
import { config } from '../../../shared/config/env';
import { Image, Organization } from '../../../shared/db/models';

const store = async (orgId: string) =>
  saveImage(await pngOf(8, 8), { orgId, projectId: null, apiKeyId: null, requestId: `req_${Math.random().toString(16).slice(2)}`, source: 'upload', model: null });

describe('management API: deleting an organization deletes its stored image bytes', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  let key: string;
  before(async () => {
    admin = await startAdmin();
    ({ key } = await buildPlatformKey());
  });
  after(() => admin.close());

  it('removes the bytes and rows of the org’s images, and leaves other orgs’ images alone', async () => {
    const doomed = await buildOrg(env().redis);
    const other = await buildOrg(env().redis);
    const mine = [await store(doomed.org.id), await store(doomed.org.id)];
    const theirs = await store(other.org.id);
    const r = await adminCall(admin.url, key, 'DELETE', `/admin/v1/organizations/${doomed.org.id}`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    for (const img of mine) expect(await imageStorage().get(img.storageKey), img.id).to.equal(undefined);
    expect(await Image.count({ where: { orgId: doomed.org.id } })).to.equal(0);
    expect(await imageStorage().get(theirs.storageKey)).to.be.instanceOf(Buffer);
    expect(await Image.count({ where: { id: theirs.id } })).to.equal(1);
  });

  it('answers 503 storage_unavailable and keeps the org when some bytes cannot be deleted; a retry finishes', async () => {
    expect(config().imageStorage, 'the test run stores images locally').to.equal('local');
    const doomed = await buildOrg(env().redis);
    const img = await store(doomed.org.id);
    // a directory where the file was: deleting it fails the way a storage outage would
    const file = path.join(path.resolve(config().imageStorageDir), img.storageKey);
    await fs.rm(file);
    await fs.mkdir(path.join(file, 'blocker'), { recursive: true });
    try {
      const r = await adminCall(admin.url, key, 'DELETE', `/admin/v1/organizations/${doomed.org.id}`);
      expect(r.status).to.equal(503);
      expect(r.body.error.code).to.equal('storage_unavailable');
      expect(await Organization.count({ where: { id: doomed.org.id } }), 'org kept').to.equal(1);
      expect(await Image.count({ where: { id: img.id } }), 'row kept for the retry').to.equal(1);
    } finally {
      await fs.rm(file, { recursive: true, force: true });
    }
    const again = await adminCall(admin.url, key, 'DELETE', `/admin/v1/organizations/${doomed.org.id}`);
    expect(again.status).to.equal(200);
    expect(await Image.count({ where: { orgId: doomed.org.id } })).to.equal(0);
  });
});
