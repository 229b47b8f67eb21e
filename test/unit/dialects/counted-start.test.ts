import { expect } from 'chai';
import crypto from 'crypto';
import { CountedStart, inputEstimate } from '../../../api/routes/messages/counted-start';
import { tokenizerPoolRuns } from '../../../shared/tokenizer/pool';
import type { MessagesEvent } from '../../../api/dialects/messages/stream';

const start = (): MessagesEvent => ({ type: 'message_start', message: { id: 'msg_x', usage: { input_tokens: 0, output_tokens: 0 } } });
const ping: MessagesEvent = { type: 'ping' };
const inputOf = (ev: MessagesEvent) => (ev.message as { usage: { input_tokens: number } }).usage.input_tokens;

/** The events of a translated stream wait for the request's count (api/routes/messages/counted-start.ts), in order and for a bounded time. */
describe('CountedStart: message_start with the counted input', () => {
  it('holds the events until the count is known, then sends them in order with input_tokens set', async () => {
    const sent: MessagesEvent[] = [];
    let resolve!: (n: number) => void;
    const c = new CountedStart(() => new Promise<number | undefined>((r) => (resolve = r)), (ev) => sent.push(ev));
    c.push([start(), ping]);
    expect(sent).to.have.length(0);
    resolve(42);
    await c.settle();
    expect(sent.map((e) => e.type)).to.deep.equal(['message_start', 'ping']);
    expect(inputOf(sent[0])).to.equal(42);
    c.push([{ type: 'message_stop' }]);
    expect(sent.map((e) => e.type)).to.deep.equal(['message_start', 'ping', 'message_stop']);
  });

  it('holds them no longer than its bound: a count not known by then leaves message_start at 0', async () => {
    const sent: MessagesEvent[] = [];
    const c = new CountedStart(() => new Promise<number | undefined>(() => undefined), (ev) => sent.push(ev), 20);
    c.push([start()]);
    const t0 = Date.now();
    await c.settle();
    expect(Date.now() - t0).to.be.lessThan(1000);
    expect(sent).to.have.length(1);
    expect(inputOf(sent[0])).to.equal(0);
  });

  it('settles at once when nothing is held (a failure before the first chunk), and a count it could not make leaves 0', async () => {
    const never = new CountedStart(() => new Promise<number | undefined>(() => undefined), () => undefined, 60_000);
    await never.settle();
    const sent: MessagesEvent[] = [];
    const failed = new CountedStart(() => Promise.resolve(undefined), (ev) => sent.push(ev));
    failed.push([start()]);
    await failed.settle();
    expect(inputOf(sent[0])).to.equal(0);
  });
});

describe('CountedStart: a count no one will read is abandoned', function () {
  this.timeout(30_000);
  it('the count is handed a signal that aborts when the events go out without it, not when it came first', async () => {
    let late!: AbortSignal;
    const c = new CountedStart((signal) => ((late = signal), new Promise<number | undefined>(() => undefined)), () => undefined, 20);
    c.push([start()]);
    await c.settle();
    expect(late.aborted).to.equal(true);
    let early!: AbortSignal;
    const d = new CountedStart((signal) => ((early = signal), Promise.resolve(7)), () => undefined, 20);
    d.push([start()]);
    await d.settle();
    expect(early.aborted).to.equal(false);
  });

  it("a large prompt's count on the tokenizer pool stops once the events went out without it (its thread freed), not at TOKEN_COUNT_TIMEOUT_MS", async () => {
    // about 10 MB of words no tokenizer cache knows: seconds of counting on the pool
    const text = crypto.randomBytes(7_000_000).toString('base64url').replace(/(.{6})/g, '$1 ');
    const body = { model: 'x', max_tokens: 1, messages: [{ role: 'user' as const, content: text }] };
    const runs = tokenizerPoolRuns();
    let counting!: Promise<number | undefined>;
    const c = new CountedStart((signal) => (counting = inputEstimate('o200k_base', body, 0, signal)), () => undefined, 20);
    c.push([start()]);
    await c.settle();
    const t0 = Date.now();
    expect(await counting).to.equal(undefined);
    expect(Date.now() - t0, 'abandoned, not counted to the end').to.be.lessThan(1000);
    expect(tokenizerPoolRuns(), 'counted on the pool').to.equal(runs + 1);
  });
});
