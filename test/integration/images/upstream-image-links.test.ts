import net from 'net';
import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { followImageUrl, realImage, usageFor, storedFiles, filesAddedSince } from '../../helpers/images';
import { startImageHost, type ImageHost } from '../../helpers/https-images';
import { expectErrorEnvelope } from '../../helpers/errors';
import { Image } from '../../../shared/db/models';

/**
 * An upstream's images answer may link to its images (`data[].url`, dall-e style) instead of sending
 * their bytes; the worker downloads them through the same SSRF guard as a caller's URL, so a compromised
 * or self-hosted upstream cannot make it fetch the operator's network (docs/security.md, Outbound
 * requests a caller can steer). The simulator's `imageUrl` knob answers such links.
 */
describe('image links in an upstream images answer go through the SSRF guard', () => {
  let o: TestOrg;
  let images: ImageHost;
  let blocked: net.Server;
  let blockedPort: number;
  let reached = 0;
  before(async () => {
    o = await buildOrg(env().redis);
    images = await startImageHost(['127.0.0.2']);
    // 127.0.0.1 is not in the test env's IMAGE_FETCH_ALLOW_CIDRS (127.0.0.2/32): any connection here is a leak
    blocked = net.createServer((s) => (reached++, s.destroy()));
    await new Promise<void>((resolve) => blocked.listen(0, '127.0.0.1', resolve));
    blockedPort = (blocked.address() as net.AddressInfo).port;
  });
  after(async () => {
    await images.close();
    await new Promise<void>((resolve) => blocked.close(() => resolve()));
  });
  beforeEach(resetSim);

  const generate = () => call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: { model: 'sim-image', prompt: 'a linked cat', size: '256x256' } });

  it('downloads a link to an address the operator trusts, stores the image and bills the request', async () => {
    env().sim.knobs.set('sim-image-1', { imageUrl: `${images.url()}/cat.png` });
    const r = await generate();
    expect(r.status, r.text).to.equal(200);
    expect(images.hits).to.include('127.0.0.2 /cat.png');
    expect(await realImage((await followImageUrl(r.body.data[0].url, o.key)).bytes)).to.deep.equal({ format: 'png', width: 120, height: 90 });
    expect(await usageFor(r.headers.get('x-service-request-id'))).to.not.equal(null);
  });

  it("downloads a link on the deployment's own origin (a self-hosted server linking its files over http)", async () => {
    env().sim.knobs.set('sim-image-1', { imageUrl: 'self' });
    const r = await generate();
    expect(r.status, r.text).to.equal(200);
    expect(await realImage((await followImageUrl(r.body.data[0].url, o.key)).bytes)).to.deep.equal({ format: 'png', width: 256, height: 256 });
    expect(await usageFor(r.headers.get('x-service-request-id'))).to.not.equal(null);
  });

  it('answers 502 upstream_error for a link to loopback, private, metadata or plain http: nothing fetched, stored or billed, no address in the answer', async () => {
    const links = [
      `https://127.0.0.1:${blockedPort}/cat.png`,
      `http://127.0.0.1:${blockedPort}/cat.png`,
      `https://localhost:${blockedPort}/cat.png`,
      `https://[::ffff:127.0.0.1]:${blockedPort}/cat.png`,
      'https://169.254.169.254/latest/meta-data/iam/security-credentials/',
      'https://10.0.0.1/cat.png',
      `http://127.0.0.2:${images.port}/cat.png`,
    ];
    images.hits.length = 0;
    const files = await storedFiles();
    for (const link of links) {
      env().sim.knobs.set('sim-image-1', { imageUrl: link });
      const t0 = Date.now();
      const r = await generate();
      expect(r.status, `${link}: ${r.text}`).to.equal(502);
      expectErrorEnvelope(r.text, 'upstream_error');
      expect(r.body.error.message).to.equal('The upstream answered with an image link the gateway could not download.');
      expect(Date.now() - t0, `${link} refused before any connection`).to.be.below(5000);
      const requestId = r.headers.get('x-service-request-id')!;
      expect(await usageFor(requestId), link).to.equal(null);
      expect(await Image.count({ where: { requestId } }), link).to.equal(0);
    }
    expect(reached, 'connections to the blocked address').to.equal(0);
    expect(images.hits, 'nothing fetched over plain http').to.deep.equal([]);
    expect(await filesAddedSince(files)).to.deep.equal([]);
  });
});
