import { expect } from 'chai';
import { streamUntilAnswered } from '../../helpers/stream-upload';
import http from 'http';
import zlib from 'zlib';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { setSwitch } from '../../../shared/switches/switches';
import { waitFor } from '../../helpers/wait';
import { decide, expectRefused, validBody } from './helpers';

const MiB = 1024 * 1024;

async function toReply(res: Response): Promise<Reply> {
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** Sends the headers and part of a body, then stalls. */
function slowPost(key: string, partial: string, declared: number): Promise<Reply> {
  const u = new URL(`${env().gw.url}/v1/systemone`);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': declared, 'SERVICE-API-KEY': key } },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode!, headers, body, text });
          req.destroy();
        });
      },
    );
    req.on('error', reject);
    req.write(partial);
  });
}

describe('POST /v1/systemone: body transport, kill switch and routes', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis, { policies: { systemone: 'included' } });
  });

  it('413 payload_too_large for a body over 8 MiB (declared length)', async () => {
    const body = JSON.stringify(validBody({ state: 'x'.repeat(8 * MiB) }));
    const r = await toReply(await fetch(`${env().gw.url}/v1/systemone`, { method: 'POST', headers: { ...keyHeader(o.key), 'content-type': 'application/json' }, body }));
    await expectRefused(r, 413, 'payload_too_large');
  });

  it('413 payload_too_large for a chunked body that crosses 8 MiB while it is read', async () => {
    const head = Buffer.from('{"model":"sim-decide","state":"');
    const r = await streamUntilAnswered('/v1/systemone', { ...keyHeader(o.key), 'content-type': 'application/json' }, head, 8 * MiB + 64 * MiB);
    await expectRefused(r, 413, 'payload_too_large');
    // answered once the cap was crossed and long before the body ended: refused while reading
    expect(r.sentWhenAnswered).to.be.above(8 * MiB).and.below(r.total);
  });

  it('accepts a body just under the cap (the cap is the raw body, not the JSON parser’s)', async () => {
    const r = await decide(o.key, validBody({ model: 'no-such-decision-model', state: 'x'.repeat(7 * MiB) }));
    expect(r.status).to.equal(404); // read and parsed whole; refused only for its model
  });

  it('415 unsupported_content_encoding for a gzip body', async () => {
    const gz = zlib.gzipSync(JSON.stringify(validBody()));
    const r = await toReply(
      await fetch(`${env().gw.url}/v1/systemone`, { method: 'POST', headers: { ...keyHeader(o.key), 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gz }),
    );
    await expectRefused(r, 415, 'unsupported_content_encoding');
  });

  it('408 body_read_timeout for a body that stalls, nothing sent upstream or billed', async () => {
    const r = await slowPost(o.key, '{"model":"sim-decide",', 400);
    await expectRefused(r, 408, 'body_read_timeout');
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
  });

  it('400 systemone_invalid_request for malformed JSON or a non-object body; 415 for another content type', async () => {
    const bad = await call('POST', '/v1/systemone', { headers: { ...keyHeader(o.key), 'content-type': 'application/json' }, raw: '{"model": ' });
    await expectRefused(bad, 400, 'systemone_invalid_request');
    const arr = await call('POST', '/v1/systemone', { headers: keyHeader(o.key), json: [validBody()] });
    await expectRefused(arr, 400, 'systemone_invalid_request');
    const text = await call('POST', '/v1/systemone', { headers: { ...keyHeader(o.key), 'content-type': 'text/plain' }, raw: JSON.stringify(validBody()) });
    await expectRefused(text, 415, 'unsupported_media_type');
  });

  it('405 for other methods; 404 for /v1/systemone/models; works under path authentication', async () => {
    const get = await call('GET', '/v1/systemone', { headers: keyHeader(o.key) });
    expect(get.status).to.equal(405);
    expect(get.body.error.code).to.equal('method_not_allowed');
    expect(get.headers.get('allow')).to.equal('POST');
    for (const method of ['GET', 'POST']) {
      const models = await call(method, '/v1/systemone/models', { headers: keyHeader(o.key), ...(method === 'POST' ? { json: {} } : {}) });
      expect(models.status).to.equal(404);
      expect(models.body.error.code).to.equal('not_found');
    }
    const viaPath = await call('POST', `/a/${o.key}/v1/systemone`, { json: validBody() });
    expect(viaPath.status, viaPath.text).to.equal(200);
    expect(viaPath.headers.get('deprecation')).to.equal('true');
  });

  it('401 without a key', async () => {
    const r = await call('POST', '/v1/systemone', { json: validBody() });
    expect(r.status).to.equal(401);
    expect(r.body.error.code).to.equal('INVALID_API_KEY');
  });

  it('503 systemone_disabled while the kill switch is engaged; the route stays registered and recovers', async () => {
    await setSwitch(env().redis, 'systemone', true);
    try {
      expect(await waitFor(() => env().gw.ctx.switches.engaged('systemone'), 3000)).to.equal(true);
      const r = await decide(o.key, validBody());
      await expectRefused(r, 503, 'systemone_disabled');
      expect(r.headers.get('retry-after')).to.be.a('string');
    } finally {
      await setSwitch(env().redis, 'systemone', false);
    }
    expect(await waitFor(() => !env().gw.ctx.switches.engaged('systemone'), 3000)).to.equal(true);
    const ok = await decide(o.key, validBody());
    expect(ok.status, ok.text).to.equal(200);
  });
});
