import { expect } from 'chai';
import sharp from 'sharp';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { Image } from '../../../shared/db/models';

const noisy = (format: 'png' | 'jpeg' | 'webp') =>
  sharp({ create: { width: 200, height: 160, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 40 } } })
    .toFormat(format)
    .toBuffer();

describe('image uploads are decoded, not only their header', () => {
  let o: TestOrg;
  before(async () => {
    o = await buildOrg(env().redis);
  });

  for (const format of ['png', 'jpeg', 'webp'] as const) {
    it(`refuses a truncated ${format} whose header is intact (400 invalid_image, JSON and multipart), nothing stored`, async () => {
      const whole = await noisy(format);
      if (format !== 'webp') expect((await sharp(whole.subarray(0, Math.floor(whole.length * 0.8))).metadata()).width, 'the header alone still reads').to.equal(200);
      const before = await Image.count({ where: { orgId: o.org.id } });
      for (const cut of [0.5, 0.8, 0.97]) {
        const truncated = whole.subarray(0, Math.floor(whole.length * cut));
        const r = await call('POST', '/v1/images/uploads', { headers: keyHeader(o.key), json: { b64_json: truncated.toString('base64') } });
        expect(r.status, `${cut}: ${r.text}`).to.equal(400);
        expect(r.body.error.code).to.equal('invalid_image');
        const form = new FormData();
        form.append('file', new Blob([truncated], { type: `image/${format}` }), `cut.${format}`);
        const m = await fetch(`${env().gw.url}/v1/images/uploads`, { method: 'POST', headers: keyHeader(o.key), body: form });
        expect(m.status).to.equal(400);
        expect(((await m.json()) as { error: { code: string } }).error.code).to.equal('invalid_image');
      }
      expect(await Image.count({ where: { orgId: o.org.id } })).to.equal(before);
      const ok = await call('POST', '/v1/images/uploads', { headers: keyHeader(o.key), json: { b64_json: whole.toString('base64') } });
      expect(ok.status, ok.text).to.equal(201);
    });
  }
});
