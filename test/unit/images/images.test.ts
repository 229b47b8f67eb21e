import { expect } from 'chai';
import { isBlockedAddress, embeddedIpv4, cidrList, inList } from '../../../shared/net/ip-ranges';
import { signature, verify } from '../../../shared/images/signing';
import { S3Storage } from '../../../shared/storage/s3';
import { applyLimits, limitsOf } from '../../../api/routes/images/limits';
import type { CatalogModel } from '../../../shared/catalog/catalog';
import { ApiError } from '../../../shared/errors/ApiError';

describe('unit: images', () => {
  it('a libvips that cannot load is the gateway\'s error (500), never the client\'s invalid_image', async () => {
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
    const inspectPath = require.resolve('../../../shared/images/inspect');
    const sharpPath = require.resolve('sharp');
    const [savedInspect, savedSharp] = [require.cache[inspectPath], require.cache[sharpPath]];
    const fresh = () => {
      delete require.cache[inspectPath];
      return (require('../../../shared/images/inspect') as typeof import('../../../shared/images/inspect')).inspectImage;
    };
    try {
      expect(await fresh()(png), 'the image itself is fine').to.deep.equal({ format: 'png', width: 1, height: 1 });
      require.cache[sharpPath] = {
        id: sharpPath,
        filename: sharpPath,
        loaded: true,
        get exports(): never {
          throw new Error('Could not load the "sharp" module using the linux-x64 runtime');
        },
      } as unknown as NodeJS.Module;
      const err = await fresh()(png).then(() => undefined, (e: unknown) => e);
      expect(err, 'an error').to.be.instanceOf(Error);
      expect(err, 'not an answer about the image').to.not.be.instanceOf(ApiError);
    } finally {
      require.cache[inspectPath] = savedInspect;
      require.cache[sharpPath] = savedSharp;
    }
  });

  it('blocks private, loopback, link-local, metadata and tunnelled addresses, and lets public ones through', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.31.255.255', '192.168.0.1', '169.254.169.254', '100.100.100.200', '0.0.0.0', '255.255.255.255',
      '::1', '::', '::ffff:127.0.0.1', '::ffff:a9fe:a9fe', '::127.0.0.1', 'fd00:ec2::254', 'fe80::1%eth0', 'fc00::1', 'ff02::1', '64:ff9b::a00:1', '2002:7f00:1::', 'not-an-ip']) {
      expect(isBlockedAddress(a), a).to.equal(true);
    }
    for (const a of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect(isBlockedAddress(a), a).to.equal(false);
    }
    expect(embeddedIpv4('::ffff:7f00:1')).to.equal('127.0.0.1');
    expect(embeddedIpv4('2606:4700::1')).to.equal(undefined);
  });

  it('parses operator CIDR lists and refuses malformed ones', () => {
    const l = cidrList(['127.0.0.2/32', '10.9.0.0/16', 'fd12::/16']);
    expect(inList(l, '127.0.0.2')).to.equal(true);
    expect(inList(l, '127.0.0.1')).to.equal(false);
    expect(inList(l, '10.9.200.1')).to.equal(true);
    expect(inList(l, '::ffff:10.9.0.1')).to.equal(true);
    expect(inList(l, 'fd12::5')).to.equal(true);
    for (const bad of ['10.0.0.0/33', 'example.com/8', '1.2.3.4/x']) expect(() => cidrList([bad]), bad).to.throw(/Invalid CIDR/);
  });

  it('verifies signatures over id and expiry, in constant time, then their expiry', () => {
    const exp = 2_000_000_000;
    const sig = signature('img_a', exp);
    expect(verify('img_a', String(exp), sig, Date.now())).to.equal('ok');
    expect(verify('img_b', String(exp), sig, Date.now())).to.equal('invalid');
    expect(verify('img_a', String(exp + 1), sig, Date.now())).to.equal('invalid');
    expect(verify('img_a', String(exp), sig.slice(1), Date.now())).to.equal('invalid');
    expect(verify('img_a', undefined, sig, Date.now())).to.equal('invalid');
    expect(verify('img_a', ['1', '2'], sig, Date.now())).to.equal('invalid');
    expect(verify('img_a', String(exp), sig, exp * 1000)).to.equal('expired');
  });

  it('presigns S3 GET URLs for the object, with the requested lifetime', async () => {
    const s3 = new S3Storage({ bucket: 'imgs', region: 'eu-west-1', endpoint: 'https://s3.example.test', accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret', forcePathStyle: true });
    const url = new URL(await s3.presignedUrl('img_x.png', Date.now() + 120_000, 'image/png'));
    expect(url.origin + url.pathname).to.equal('https://s3.example.test/imgs/img_x.png');
    expect(url.searchParams.get('X-Amz-Algorithm')).to.equal('AWS4-HMAC-SHA256');
    expect(Number(url.searchParams.get('X-Amz-Expires'))).to.be.within(118, 120);
    expect(url.searchParams.get('X-Amz-Signature')).to.match(/^[0-9a-f]{64}$/);
    expect(url.searchParams.get('response-content-type')).to.equal('image/png');
  });

  it('applies published limits with defaults, and falls back conservatively for models without them', () => {
    const m = (limits: Record<string, unknown>) => ({ limits }) as unknown as CatalogModel;
    const lim = limitsOf(m({ sizes: ['512x512', '1024x1024'], default_size: '1024x1024', output_formats: ['png', 'webp'], max_n: 2, steps: { min: 1, max: 10 } }));
    expect(applyLimits({ prompt: 'p' }, lim).upstream).to.deep.equal({ prompt: 'p', n: 1, size: '1024x1024', output_format: 'png' });
    expect(() => applyLimits({ prompt: 'p', guidance: 2 }, lim)).to.throw(/does not take 'guidance'/);
    const bare = limitsOf(m({}));
    expect(bare).to.include({ default_size: '1024x1024', max_n: 1, default_output_format: 'png' });
    expect(() => applyLimits({ prompt: 'p', steps: 3 }, bare)).to.throw(/does not take 'steps'/);
  });
});
