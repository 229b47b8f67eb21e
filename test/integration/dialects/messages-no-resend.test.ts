import net from 'net';
import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { ScriptedUpstream, byStream, chunk, completion, usageChunk } from '../../helpers/scripted-upstream';

/**
 * A TCP proxy in front of the gateway that passes each request whole and, of each response, its
 * headers (without `x-should-retry` when `strip` is set, as a gateway that never sent it) and the
 * first bytes of its body, then drops the connection: a network that breaks while the body is read.
 */
class CuttingProxy {
  strip = false;
  private readonly server = net.createServer((client) => this.relay(client));
  url = '';

  static async start(): Promise<CuttingProxy> {
    const p = new CuttingProxy();
    await new Promise<void>((r) => p.server.listen(0, '127.0.0.1', r));
    p.url = `http://127.0.0.1:${(p.server.address() as net.AddressInfo).port}`;
    return p;
  }

  private relay(client: net.Socket): void {
    const gw = new URL(env().gw.url);
    const upstream = net.connect(Number(gw.port), gw.hostname);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream);
    let seen = Buffer.alloc(0);
    upstream.on('data', (d: Buffer) => {
      seen = Buffer.concat([seen, d]);
      const end = seen.indexOf('\r\n\r\n');
      if (end < 0 || seen.length < end + 4 + 10) return;
      upstream.removeAllListeners('data');
      let head = seen.subarray(0, end + 4).toString('latin1');
      if (this.strip) head = head.replace(/^x-should-retry:.*\r\n/im, '');
      client.write(Buffer.concat([Buffer.from(head, 'latin1'), seen.subarray(end + 4, end + 4 + 10)]), () => {
        client.destroy();
        upstream.destroy();
      });
    });
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}

/**
 * `x-should-retry: false` on a billed JSON answer (api/routes/messages/no-resend.ts). The official SDK
 * (1.17, core/api-promise.js parseResponseRetrying) sends the whole POST again when the connection
 * fails while it reads the body of a response whose headers came, unless that response said
 * `x-should-retry: false`: a cut connection made the upstream generate, and the gateway bill, the
 * answer again for each retry. With the header the SDK raises its APIConnectionError and the upstream
 * saw the request once; with the header taken out (as before), it saw it once per try.
 */
describe('messages dialect: a billed JSON answer is not resent when its body breaks off', function () {
  this.timeout(40_000);
  let up: ScriptedUpstream;
  let claude: ScriptedUpstream;
  let proxy: CuttingProxy;
  let key: string;
  const models: Record<string, string> = {};
  beforeEach(resetSim);
  before(async () => {
    up = await ScriptedUpstream.start('openai');
    claude = await ScriptedUpstream.start('anthropic');
    models.translated = await up.model();
    models.native = await claude.model();
    key = (await buildOrg(env().redis)).key;
    proxy = await CuttingProxy.start();
  });
  after(async () => {
    await proxy.close();
    await up.close();
    await claude.close();
  });
  beforeEach(() => {
    up.reset();
    claude.reset();
    proxy.strip = false;
    const answer = 'A long enough answer to be cut part-way through.';
    up.otherwise = byStream(completion({ content: answer }, 'stop'), [chunk({ role: 'assistant', content: answer }), chunk({}, 'stop'), usageChunk()]);
    const usage = { input_tokens: 9, output_tokens: 12 };
    claude.otherwise = () => ({ kind: 'json', body: { id: 'msg_up', type: 'message', role: 'assistant', model: 'up-model', content: [{ type: 'text', text: answer }], stop_reason: 'end_turn', stop_sequence: null, usage } });
  });
  const generations = () => up.received.length + claude.received.length;
  const sdk = () => new Anthropic({ apiKey: key, baseURL: proxy.url, maxRetries: 1 });
  const create = async (params: Anthropic.MessageCreateParamsNonStreaming) => {
    try {
      await sdk().messages.create(params);
    } catch (err) {
      return err;
    }
    throw new Error('the cut answer was read whole');
  };

  for (const [name, kind, extra] of [
    ['a translated upstream', 'translated', {}],
    ['an Anthropic-native upstream (native bypass)', 'native', {}],
    ["the gateway's web search loop", 'translated', { tools: [{ type: 'web_search_20250305', name: 'web_search' }] }],
  ] as const) {
    it(`${name}: the SDK fails with a connection error and the upstream generated the answer once; without the header, twice`, async () => {
      const params = { model: models[kind], max_tokens: 100, messages: [{ role: 'user' as const, content: 'hi' }], ...extra } as Anthropic.MessageCreateParamsNonStreaming;
      expect(await create(params)).to.be.instanceOf(Anthropic.APIConnectionError);
      expect(generations(), 'generated once').to.equal(1);

      proxy.strip = true;
      expect(await create(params)).to.be.instanceOf(Anthropic.APIConnectionError);
      expect(generations(), 'one more try of the whole request').to.equal(3);

      const direct = await call('POST', '/v1/messages', { headers: { ...keyHeader(key), 'anthropic-version': '2023-06-01' }, json: params });
      expect([direct.status, direct.headers.get('x-should-retry')]).to.deep.equal([200, 'false']);
    });
  }

  it('is not on what costs nothing to send again: count_tokens, an answer from the answer cache; nor on a stream, which the SDK never resends', async () => {
    const h = { ...keyHeader(key), 'anthropic-version': '2023-06-01' };
    const params = { model: models.translated, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] };
    const counted = await call('POST', '/v1/messages/count_tokens', { headers: h, json: params });
    expect([counted.status, counted.headers.get('x-should-retry')]).to.deep.equal([200, null]);
    const cached = { ...h, 'SERVICE-CACHE': 'on' };
    const miss = await call('POST', '/v1/messages', { headers: cached, json: params });
    const hit = await call('POST', '/v1/messages', { headers: cached, json: params });
    expect([miss.headers.get('x-service-cache'), miss.headers.get('x-should-retry')]).to.deep.equal(['MISS', 'false']);
    expect([hit.headers.get('x-service-cache'), hit.headers.get('x-should-retry')]).to.deep.equal(['HIT', null]);
    const streamed = await postSse('/v1/messages', h, { ...params, stream: true });
    expect([streamed.status, streamed.headers.get('x-should-retry')]).to.deep.equal([200, null]);
    expect(up.received).to.have.length(2);
  });
});
