import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { poolModel, rndId, simDeployment } from '../../helpers/pool-models';
import { pngOf, usageFor } from '../../helpers/images';
import { startImageHost, type ImageHost } from '../../helpers/https-images';
import { withSettings } from '../../helpers/settings';

const V = { 'anthropic-version': '2023-06-01' };

/** Every string in a JSON value that starts with `http` (an image URL left for the upstream to fetch). */
function httpUrls(v: unknown): string[] {
  return JSON.stringify(v).match(/"https?:\/\/[^"]*"/g) ?? [];
}

/**
 * A self-hosted OpenAI-compatible upstream (vLLM and the like) fetches an image URL itself, from inside
 * the operator's network; so for a deployment that inlines (`inline_image_urls`, on by default for a
 * server that is not a vendor's API: the simulator here) the worker downloads the URL through the SSRF
 * guard and sends a data URL. A vendor's API (`inline_image_urls: false`) still gets the URL.
 */
describe('image URLs inlined for self-hosted upstreams (SSRF through the upstream)', () => {
  let o: TestOrg;
  let host: ImageHost;
  let cat: string;
  before(async () => {
    o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 32 } });
    host = await startImageHost(['127.0.0.2', '127.0.0.1']);
    cat = (await pngOf(120, 90)).toString('base64');
  });
  after(() => host.close());
  beforeEach(() => {
    resetSim();
    host.hits.length = 0;
  });

  const chat = (model: string, content: unknown[], extra: Record<string, unknown> = {}) =>
    call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: Object.assign({ model, max_tokens: 16, messages: [{ role: 'user', content }] }, extra) });

  it('sends a self-hosted deployment a data URL of the bytes (detail kept), never the URL; data URLs pass unchanged; the request is billed', async () => {
    const model = await poolModel([simDeployment('vllm')]);
    const given = `data:image/png;base64,${cat}`;
    const r = await chat(model, [
      { type: 'text', text: 'what is this?' },
      { type: 'image_url', image_url: { url: `${host.url()}/cat.png`, detail: 'low' } },
      { type: 'image_url', image_url: { url: given } },
    ]);
    expect(r.status, r.text).to.equal(200);
    expect(host.hits).to.deep.equal(['127.0.0.2 /cat.png']);
    const [sent] = env().sim.log.entries;
    const parts = (sent.body as { messages: Array<{ content: Array<{ type: string; image_url?: { url: string; detail?: string } }> }> }).messages[0].content;
    expect(parts[1]).to.deep.equal({ type: 'image_url', image_url: { url: `data:image/png;base64,${cat}`, detail: 'low' } });
    expect(parts[2]).to.deep.equal({ type: 'image_url', image_url: { url: given } });
    expect(httpUrls(sent.body), 'no URL left for the upstream to fetch').to.deep.equal([]);
    expect(await usageFor(r.headers.get('x-service-request-id'))).to.not.equal(null);
  });

  it('inlines the responses dialect (input_image by URL) and, streamed, the chat dialect too', async () => {
    const model = await poolModel([simDeployment('vllm')]);
    const r = await call('POST', '/v1/responses', {
      headers: keyHeader(o.key),
      json: { model, input: [{ role: 'user', content: [{ type: 'input_text', text: 'what is this?' }, { type: 'input_image', image_url: `${host.url()}/cat.png`, detail: 'auto' }] }] },
    });
    expect(r.status, r.text).to.equal(200);
    const s = await chat(model, [{ type: 'image_url', image_url: { url: `${host.url()}/cat.png` } }], { stream: true });
    expect(s.status, s.text).to.equal(200);
    expect(env().sim.log.entries).to.have.length(2);
    for (const e of env().sim.log.entries) {
      expect(httpUrls(e.body)).to.deep.equal([]);
      expect(JSON.stringify(e.body)).to.include(`data:image/png;base64,${cat}`);
    }
  });

  it('sends an Anthropic-shaped self-hosted upstream (messages, native) a base64 source, in tool results too', async () => {
    const claude = { name: 'claude', provider: 'simulator-anthropic', upstream: `claude-${rndId()}` };
    const model = await poolModel([claude]);
    const image = { type: 'image', source: { type: 'url', url: `${host.url()}/cat.png` } };
    const r = await call('POST', '/v1/messages', {
      headers: { ...keyHeader(o.key), ...V },
      json: {
        model,
        max_tokens: 16,
        messages: [
          { role: 'user', content: [image, { type: 'text', text: 'look' }] },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'shot', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [image] }] },
        ],
      },
    });
    expect(r.status, r.text).to.equal(200);
    const [sent] = env().sim.log.entries;
    expect(sent.path).to.equal('/v1/messages');
    const msgs = (sent.body as { messages: Array<{ content: Array<Record<string, unknown>> }> }).messages;
    const b64 = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: cat } };
    expect(msgs[0].content[0]).to.deep.equal(b64);
    expect((msgs[2].content[0] as { content: unknown[] }).content[0]).to.deep.equal(b64);
    expect(httpUrls(sent.body)).to.deep.equal([]);
  });

  it('refuses a URL to a private, loopback or metadata address (400 url_not_allowed) before any upstream is called; nothing is billed', async () => {
    const model = await poolModel([simDeployment('vllm')]);
    for (const url of [`${host.url('127.0.0.1')}/cat.png`, 'https://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/a.png', `https://localhost:${host.port}/cat.png`]) {
      for (const stream of [false, true]) {
        const r = await chat(model, [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url } }], { stream });
        expect(r.status, `${url} ${r.text}`).to.equal(400);
        expect(r.body.error.code, url).to.equal('url_not_allowed');
        expect(r.body.error.message).to.match(/^Image 1 of the request: /);
        expect(await usageFor(r.headers.get('x-service-request-id')), 'nothing billed').to.equal(null);
      }
    }
    expect(env().sim.log.entries, 'no upstream called').to.have.length(0);
    expect(host.hits, 'no connection to the loopback address').to.deep.equal([]);
    // the messages dialect's URL source, refused alike
    const claude = await poolModel([{ name: 'claude', provider: 'simulator-anthropic', upstream: `claude-${rndId()}` }]);
    const m = await call('POST', '/v1/messages', {
      headers: { ...keyHeader(o.key), ...V },
      json: { model: claude, max_tokens: 16, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://169.254.169.254/latest/meta-data/' } }] }] },
    });
    expect([m.status, m.body.error?.type], m.text).to.deep.equal([400, 'invalid_request_error']);
    expect(env().sim.log.entries).to.have.length(0);
  });

  it('refuses what is not an image (unsupported_image_type) and an image over the cap (413 image_too_large)', async () => {
    const model = await poolModel([simDeployment('vllm')]);
    const fake = await chat(model, [{ type: 'image_url', image_url: { url: `${host.url()}/fake.png` } }]);
    expect([fake.status, fake.body.error?.code], fake.text).to.deep.equal([400, 'unsupported_image_type']);
    const big = await chat(model, [{ type: 'image_url', image_url: { url: `data:image/png;base64,${cat}` } }, { type: 'image_url', image_url: { url: `${host.url()}/big.png` } }]);
    expect([big.status, big.body.error?.code], big.text).to.deep.equal([413, 'image_too_large']);
    expect(big.body.error.message, 'the second image of the request, after a data URL').to.match(/^Image 2 of the request: /);
    expect(env().sim.log.entries).to.have.length(0);
  });

  it("caps a request's downloads together (IMAGE_URL_INLINE_MAX_BYTES): past it 413 image_too_large, no upstream called", async () => {
    const model = await poolModel([simDeployment('vllm')]);
    const size = Buffer.from(cat, 'base64').length;
    const fits = Math.floor(1024 / size);
    const parts = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'image_url', image_url: { url: `${host.url()}/cat.png?n=${i}` } }));
    await withSettings({ IMAGE_URL_INLINE_MAX_BYTES: '1024' }, async () => {
      const ok = await chat(model, parts(fits));
      expect(ok.status, ok.text).to.equal(200);
      resetSim();
      const over = await chat(model, parts(fits + 1));
      expect([over.status, over.body.error?.code], over.text).to.deep.equal([413, 'image_too_large']);
      expect(over.body.error.message).to.equal(`Image ${fits + 1} of the request: The request's images by URL add up to more than 1024 bytes.`);
      expect(env().sim.log.entries).to.have.length(0);
      expect(await usageFor(over.headers.get('x-service-request-id'))).to.equal(null);
    });
  });

  it('passes the URL unchanged to a deployment that does not inline (a vendor API: inline_image_urls false); in a mixed pool only the self-hosted one gets bytes', async () => {
    const vendor = simDeployment('vendor', { inline_image_urls: false });
    const model = await poolModel([vendor]);
    // a URL the guard would refuse: the gateway does not fetch it, the vendor's cloud would
    const url = `${host.url('127.0.0.1')}/cat.png`;
    const r = await chat(model, [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url } }]);
    expect(r.status, r.text).to.equal(200);
    const parts = (env().sim.log.entries[0].body as { messages: Array<{ content: unknown[] }> }).messages[0].content;
    expect(parts[1]).to.deep.equal({ type: 'image_url', image_url: { url } });
    expect(host.hits).to.deep.equal([]);

    resetSim();
    const selfHosted = simDeployment('vllm');
    const mixed = await poolModel([selfHosted, simDeployment('vendor', { inline_image_urls: false })]);
    const replies = await Promise.all(Array.from({ length: 8 }, () => chat(mixed, [{ type: 'image_url', image_url: { url: `${host.url()}/cat.png` } }])));
    for (const x of replies) expect(x.status, x.text).to.equal(200);
    for (const e of env().sim.log.entries) {
      const got = JSON.stringify(e.body);
      if (e.model === selfHosted.upstream) expect(httpUrls(e.body)).to.deep.equal([]);
      else expect(got).to.include(`"${host.url()}/cat.png"`);
    }
  });

  it("inlines an image_url whatever the part's type says (vLLM reads input_image on chat, and a part with a uuid by its image_url); refuses one to the metadata address", async () => {
    const model = await poolModel([simDeployment('vllm')]);
    const ok = await chat(model, [
      { type: 'input_image', image_url: `${host.url()}/cat.png` },
      { type: 'text', text: 'and this', uuid: 'img-1', image_url: { url: `${host.url()}/cat.png` } },
    ]);
    expect(ok.status, ok.text).to.equal(200);
    const parts = (env().sim.log.entries[0].body as { messages: Array<{ content: unknown[] }> }).messages[0].content;
    expect(parts[0]).to.deep.equal({ type: 'input_image', image_url: `data:image/png;base64,${cat}` });
    expect(parts[1]).to.deep.equal({ type: 'text', text: 'and this', uuid: 'img-1', image_url: { url: `data:image/png;base64,${cat}` } });
    expect(httpUrls(env().sim.log.entries[0].body)).to.deep.equal([]);
    resetSim();
    for (const part of [
      { type: 'input_image', image_url: 'https://169.254.169.254/latest/meta-data/' },
      { type: 'text', text: 'x', uuid: 'u1', image_url: 'https://169.254.169.254/latest/meta-data/' },
    ]) {
      const r = await chat(model, [part]);
      expect([r.status, r.body.error?.code], r.text).to.deep.equal([400, 'url_not_allowed']);
      expect(r.body.error.message).to.match(/^Image 1 of the request: /);
      expect(await usageFor(r.headers.get('x-service-request-id'))).to.equal(null);
    }
    expect(env().sim.log.entries, 'no upstream called').to.have.length(0);
  });

  it('refuses other media by URL for a deployment that inlines (vLLM fetches audio_url and video_url; a file by URL), naming the field; data URLs pass', async () => {
    const model = await poolModel([simDeployment('vllm')]);
    const cases: Array<[unknown, string]> = [
      [{ type: 'video_url', video_url: { url: 'http://169.254.169.254/latest/meta-data/' } }, 'messages[0].content[1].video_url'],
      [{ type: 'audio_url', audio_url: { url: 'http://10.0.0.1/a.wav' } }, 'messages[0].content[1].audio_url'],
      [{ type: 'text', text: 'x', uuid: 'v1', video_url: 'http://10.0.0.1/v.mp4' }, 'messages[0].content[1].video_url'],
      // a leading space: not what the adapter's https? check saw, still a URL to a server that trims it
      [{ type: 'file', file: { filename: 'a.pdf', file_data: ' http://10.0.0.1/a.pdf' } }, 'messages[0].content[1].file.file_data'],
    ];
    for (const [part, param] of cases) {
      for (const stream of [false, true]) {
        const r = await chat(model, [{ type: 'text', text: 'hi' }, part], { stream });
        expect([r.status, r.body.error?.code, r.body.error?.param], r.text).to.deep.equal([400, 'url_not_allowed', param]);
        expect(r.body.error.message).to.include('by URL');
        expect(await usageFor(r.headers.get('x-service-request-id'))).to.equal(null);
      }
    }
    expect(env().sim.log.entries, 'no upstream called').to.have.length(0);
    const data = await chat(model, [{ type: 'video_url', video_url: { url: 'data:video/mp4;base64,AAAA' } }]);
    expect(data.status, data.text).to.equal(200);
    // a deployment that does not inline (a vendor's API) still gets the URL
    const vendor = await poolModel([simDeployment('vendor', { inline_image_urls: false })]);
    const passed = await chat(vendor, [{ type: 'video_url', video_url: { url: 'https://example.com/v.mp4' } }]);
    expect(passed.status, passed.text).to.equal(200);
  });

  it("messages, native: an image in a content document source is inlined; a document by URL is refused; the responses dialect's file_url to an Anthropic-shaped server too", async () => {
    const model = await poolModel([{ name: 'claude', provider: 'simulator-anthropic', upstream: `claude-${rndId()}` }]);
    const send = (content: unknown[]) =>
      call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json: { model, max_tokens: 16, messages: [{ role: 'user', content }] } });
    const doc = { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'page' }, { type: 'image', source: { type: 'url', url: `${host.url()}/cat.png` } }] } };
    const ok = await send([doc, { type: 'text', text: 'read it' }]);
    expect(ok.status, ok.text).to.equal(200);
    const sent = env().sim.log.entries[0].body as { messages: Array<{ content: Array<{ source: { content: unknown[] } }> }> };
    expect(sent.messages[0].content[0].source.content[1]).to.deep.equal({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: cat } });
    expect(httpUrls(sent)).to.deep.equal([]);
    resetSim();
    const meta = { type: 'document', source: { type: 'content', content: [{ type: 'image', source: { type: 'url', url: 'https://169.254.169.254/latest/meta-data/' } }] } };
    const pdf = { type: 'document', source: { type: 'url', url: 'http://169.254.169.254/latest/meta-data/' } };
    const inResult = [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [pdf] }];
    for (const content of [[meta], [pdf]]) {
      const r = await send(content);
      expect([r.status, r.body.error?.type], r.text).to.deep.equal([400, 'invalid_request_error']);
    }
    const r = await call('POST', '/v1/messages', {
      headers: { ...keyHeader(o.key), ...V },
      json: { model, max_tokens: 16, messages: [{ role: 'user', content: 'go' }, { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get', input: {} }] }, { role: 'user', content: inResult }] },
    });
    expect([r.status, r.body.error?.type], r.text).to.deep.equal([400, 'invalid_request_error']);
    expect(r.body.error.message).to.include('messages[2].content[0].content[0].source.url');
    const resp = await call('POST', '/v1/responses', {
      headers: keyHeader(o.key),
      json: { model, input: [{ role: 'user', content: [{ type: 'input_text', text: 'read' }, { type: 'input_file', file_url: 'http://169.254.169.254/latest/meta-data/' }] }] },
    });
    expect([resp.status, resp.body.error?.code], resp.text).to.deep.equal([400, 'url_not_allowed']);
    expect(env().sim.log.entries, 'no upstream called').to.have.length(0);
  });

  it("bounds a request's downloads together in time (IMAGE_URL_INLINE_TIMEOUT_MS): slow images do not hold the job for each one's timeout", async () => {
    const model = await poolModel([simDeployment('vllm')]);
    // each image arrives after 800 ms, well within its own timeout; four of them take 3.2 s
    const parts = Array.from({ length: 4 }, (_, i) => ({ type: 'image_url', image_url: { url: `${host.url()}/slow.png?ms=800&n=${i}` } }));
    await withSettings({ IMAGE_FETCH_TIMEOUT_MS: '2000', IMAGE_URL_INLINE_TIMEOUT_MS: '2000' }, async () => {
      const t0 = Date.now();
      const r = await chat(model, parts);
      const took = Date.now() - t0;
      expect([r.status, r.body.error?.code], r.text).to.deep.equal([400, 'image_fetch_failed']);
      expect(r.body.error.message).to.match(/^Image [2-4] of the request: The request's images by URL took more than 2000 ms to download\.$/);
      expect(took, 'stopped at the budget, not after every image').to.be.below(3000);
    });
    expect(env().sim.log.entries).to.have.length(0);
  });
});
