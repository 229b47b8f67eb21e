import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';
import { parseSse, type SseEvent } from '../../helpers/sse-events';
import { withSettings } from '../../helpers/settings';
import { liveKeepalives } from '../../../api/sse-keepalive';

const V = { 'anthropic-version': '2023-06-01' };
const PING_MS = 200;

/**
 * Anthropic's keepalive (its streaming document: "Event streams may also include any number of
 * `ping` events"): a messages stream that has written nothing for MESSAGES_PING_INTERVAL_MS writes
 * `event: ping`, before its first event too, so a proxy's idle timeout does not cut an upstream that
 * is silent (held by the simulator's `hold` knob until the test has seen the ping; without the
 * keepalive nothing at all reached the client while it was held). The timer stops when the stream
 * ends, fails or its client leaves.
 */
describe('messages dialect: ping events on a quiet stream', function () {
  this.timeout(30_000);
  let o: TestOrg;
  let h: Record<string, string>;
  before(async () => {
    o = await buildOrg(env().redis);
    h = { ...keyHeader(o.key), ...V, 'content-type': 'application/json' };
  });
  beforeEach(resetSim);
  afterEach(() => env().sim.knobs.release());

  const request = (model: string, extra: Record<string, unknown> = {}) => ({ model, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Say hello' }], ...extra });

  /** Reads the stream as it comes; `until` resolves once the text read so far holds `what` (or fails after `ms`). */
  function open(body: unknown, abort?: AbortController) {
    let text = '';
    let done = false;
    const read = (async () => {
      const res = await fetch(`${env().gw.url}/v1/messages`, { method: 'POST', headers: h, body: JSON.stringify(body), signal: abort?.signal });
      const reader = res.body!.getReader();
      const dec = new TextDecoder();
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) break;
        text += dec.decode(value, { stream: true });
      }
      done = true;
      return { status: res.status, type: res.headers.get('content-type') };
    })();
    read.catch(() => undefined);
    const until = async (what: string, ms = 5_000) => {
      const end = Date.now() + ms;
      while (!text.includes(what)) {
        if (done || Date.now() > end) throw new Error(`no ${JSON.stringify(what)} in ${JSON.stringify(text)} (ended: ${done})`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    return { read, until, events: (): SseEvent[] => parseSse(text) };
  }

  async function keepalivesStopped(): Promise<void> {
    const end = Date.now() + 5_000;
    while (liveKeepalives() !== 0) {
      if (Date.now() > end) throw new Error(`${liveKeepalives()} keepalive timer(s) still running`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  for (const [model, upstream] of [
    ['sim-chat', 'sim-chat-1'],
    ['sim-claude', 'sim-claude-1'],
  ]) {
    it(`${model}: an upstream silent before its first byte: pings (the headers with the first), then the whole answer, and the timer stops`, async () => {
      await withSettings({ MESSAGES_PING_INTERVAL_MS: String(PING_MS) }, async () => {
        env().sim.knobs.set(upstream, { hold: true });
        const s = open(request(model));
        await s.until('event: ping\ndata: {"type":"ping"}\n\n');
        expect(liveKeepalives()).to.be.greaterThan(0);
        env().sim.knobs.release();
        const r = await s.read;
        expect(r.status).to.equal(200);
        expect(r.type).to.match(/^text\/event-stream/);
        const names = s.events().map((e) => e.event);
        expect(names[0], names.join()).to.equal('ping');
        const start = names.indexOf('message_start');
        expect(names.slice(0, start).every((n) => n === 'ping'), names.join()).to.equal(true);
        expect(names.at(-1)).to.equal('message_stop');
        for (const e of s.events().filter((x) => x.event === 'ping')) expect(e.data).to.deep.equal({ type: 'ping' });
        await keepalivesStopped();
      });
    });
  }

  it('sim-chat: an upstream silent between chunks: pings between message_start and message_stop', async () => {
    await withSettings({ MESSAGES_PING_INTERVAL_MS: String(PING_MS) }, async () => {
      env().sim.knobs.set('sim-chat-1', { tokenDelayMs: 4 * PING_MS, outputWords: 1 });
      const s = open(request('sim-chat'));
      await s.read;
      const names = s.events().map((e) => e.event);
      const start = names.indexOf('message_start');
      const pings = names.map((n, i) => (n === 'ping' ? i : -1)).filter((i) => i > start && i < names.indexOf('message_delta'));
      // beyond the one Anthropic sends after the first block starts (stream.ts)
      expect(pings.length, names.join()).to.be.greaterThan(1);
      expect(names.at(-1)).to.equal('message_stop');
      await keepalivesStopped();
    });
  });

  it('the official SDK takes a stream that opens with pings: its final message is the answer', async () => {
    await withSettings({ MESSAGES_PING_INTERVAL_MS: String(PING_MS) }, async () => {
      env().sim.knobs.set('sim-chat-1', { hold: true, replyWords: ['kept', 'alive'] });
      // what the SDK is sent, read beside it from a copy of the response
      let wire = '';
      const tee: typeof fetch = async (url, init) => {
        const res = await fetch(url, init);
        const copy = res.clone().body!.getReader();
        const dec = new TextDecoder();
        void (async () => {
          for (let r = await copy.read(); !r.done; r = await copy.read()) wire += dec.decode(r.value, { stream: true });
        })().catch(() => undefined);
        return res;
      };
      const client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0, fetch: tee });
      const stream = client.messages.stream(request('sim-chat') as never);
      const seen: string[] = [];
      stream.on('streamEvent', (e) => seen.push(e.type));
      const end = Date.now() + 5_000;
      while (!wire.includes('event: ping') && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      expect(wire, 'a ping while the upstream is held').to.match(/^event: ping\n/);
      env().sim.knobs.release();
      const m = await stream.finalMessage();
      expect(m.content).to.deep.equal([{ type: 'text', text: 'kept alive' }]);
      expect(m.stop_reason).to.equal('end_turn');
      expect(seen[0], 'the SDK skips pings').to.equal('message_start');
      await keepalivesStopped();
    });
  });

  it('a failure after a ping is the in-band error event (the headers are out), and the timer stops', async () => {
    await withSettings({ MESSAGES_PING_INTERVAL_MS: String(PING_MS) }, async () => {
      env().sim.knobs.set('sim-chat-1', { hold: true, status: 400 });
      const s = open(request('sim-chat'));
      await s.until('event: ping');
      env().sim.knobs.release();
      const r = await s.read;
      expect(r.status).to.equal(200);
      const last = s.events().at(-1)!;
      expect(last.event, JSON.stringify(s.events())).to.equal('error');
      expect(last.data.type).to.equal('error');
      expect(last.data.error.type).to.equal('invalid_request_error');
      await keepalivesStopped();
    });
  });

  it('a client that leaves while the upstream is silent: the timer stops', async () => {
    await withSettings({ MESSAGES_PING_INTERVAL_MS: String(PING_MS) }, async () => {
      env().sim.knobs.set('sim-chat-1', { hold: true });
      const abort = new AbortController();
      const s = open(request('sim-chat'), abort);
      await s.until('event: ping');
      abort.abort();
      await keepalivesStopped();
    });
  });

  it('the gateway web search loop: pings while its upstream is silent', async () => {
    await withSettings({ MESSAGES_PING_INTERVAL_MS: String(PING_MS) }, async () => {
      env().sim.knobs.set('sim-chat-1', { hold: true });
      const s = open(request('sim-chat', { tools: [{ type: 'web_search_20250305', name: 'web_search' }] }));
      await s.until('event: ping');
      env().sim.knobs.release();
      await s.read;
      expect(s.events().map((e) => e.event)[0]).to.equal('ping');
      await keepalivesStopped();
    });
  });

  it('MESSAGES_PING_INTERVAL_MS=0: no keepalive timer', async () => {
    await withSettings({ MESSAGES_PING_INTERVAL_MS: '0' }, async () => {
      env().sim.knobs.set('sim-chat-1', { hold: true });
      const s = open(request('sim-chat'));
      const end = Date.now() + 5_000;
      while (env().sim.log.entries.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      expect(liveKeepalives()).to.equal(0);
      env().sim.knobs.release();
      await s.read;
      expect(s.events().filter((e) => e.event === 'ping')).to.have.length(1); // Anthropic's, after the first block starts
    });
  });
});
