import { expect } from 'chai';
import { createRedis } from '../../../shared/redis/connection';
import { ReplyPublisher } from '../../../shared/queues/reply-publisher';
import type { ReplyMessage } from '../../../shared/queues/reply-messages';
import { waitFor } from '../../helpers/wait';

/**
 * The worker holds stream chunks made in one event-loop turn and sends each request's as one message
 * (`b`), all in one pipeline; the pod must still receive every chunk in order, and a result or error
 * after the chunks (sharded pub/sub).
 */
/** Each chunk a message carries, as [seq, data], with `r`/`e` for the final messages. */
const expand = (m: ReplyMessage): Array<[number, string] | string> =>
  m.t === 'c' ? [[m.s, m.d]] : m.t === 'b' ? m.d.map((d, k): [number, string] => [m.s + k, d]) : [m.t];
describe('reply publisher: chunk batching keeps the order', () => {
  const channel = `gwtest-reply-order-${process.pid}`;
  const sub = createRedis('subscriber');
  const pub = createRedis('command');
  const publisher = new ReplyPublisher(pub);
  const got: ReplyMessage[] = [];
  before(async () => {
    sub.on('smessage', (ch: string, raw: string) => ch === channel && got.push(JSON.parse(raw) as ReplyMessage));
    await sub.ssubscribe(channel);
  });
  beforeEach(() => (got.length = 0));
  after(() => {
    sub.disconnect();
    pub.disconnect();
  });

  it('delivers chunks from one tick, then the result, in sequence order', async () => {
    const sent = Array.from({ length: 50 }, (_, i) => publisher.chunk(channel, 'job-a', i, `c${i}`));
    await publisher.result(channel, 'job-a', 50, { ok: true });
    await Promise.all(sent);
    await waitFor(() => got.some((m) => m.t === 'r'), 2000, 5);
    expect(got.flatMap(expand)).to.deep.equal([...Array.from({ length: 50 }, (_, i): [number, string] => [i, `c${i}`]), 'r']);
    // the first chunk at once (time to first token), the other 49 of that turn as one message
    expect(got.map((m) => m.t)).to.deep.equal(['c', 'b', 'r']);
  });

  it('sends held chunks before an error, and interleaves two jobs without reordering either', async () => {
    publisher.chunk(channel, 'job-b', 0, 'b0');
    publisher.chunk(channel, 'job-c', 0, 'c0');
    publisher.chunk(channel, 'job-b', 1, 'b1');
    publisher.chunk(channel, 'job-c', 1, 'c1');
    await publisher.error(channel, 'job-b', { status: 502, code: 'upstream_error', message: 'x' });
    await new Promise((r) => setImmediate(r));
    await publisher.result(channel, 'job-c', 2, 'done');
    await waitFor(() => got.length === 6, 2000, 5);
    const of = (id: string) => got.filter((m) => m.i === id).flatMap(expand).map((x) => (typeof x === 'string' ? x : x[1]));
    expect(of('job-b')).to.deep.equal(['b0', 'b1', 'e']);
    expect(of('job-c')).to.deep.equal(['c0', 'c1', 'r']);
  });
});
