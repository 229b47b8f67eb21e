import { expect } from 'chai';
import { follow } from '../../../scripts/bench/stages';
import type { TimelineEvent } from '../../../scripts/bench/stage-timeline';

/**
 * scripts/bench/stages.ts: a request is followed through the web's and the worker's events by time,
 * and a request that overlaps the next one (more than one in flight) is left out.
 */
describe('bench:stages: following one request through web and worker', () => {
  /** One request's events starting at `t` (µs): web then worker then web again. */
  function request(t: number): { web: TimelineEvent[]; worker: TimelineEvent[] } {
    return {
      web: [
        [t, 'request', 'client', '/v1/chat/completions'],
        [t + 100, 'add', 'redis', 'chat-interactive'],
        [t + 150, 'write', 'redis', '*15\r\n$7\r\nevalsha'],
        [t + 300, 'read', 'redis', '$28\r\nreq_1'], // the add's reply: not the answer
        [t + 2_000, 'read', 'redis', '>3\r\n$8\r\nsmessage\r\n'],
        [t + 2_100, 'write', 'client', 'HTTP/1.1 200 OK'],
      ],
      worker: [
        [t + 400, 'read', 'redis', '*4\r\n*18\r\n$2\r\npb'],
        [t + 450, 'job', 'redis', ''],
        [t + 455, 'processor', 'redis', ''],
        [t + 500, 'dispatch', 'upstream', ''],
        [t + 520, 'write', 'redis', '*17\r\n$7\r\nevalsha'], // BullMQ's next fetch, before the upstream write
        [t + 600, 'write', 'upstream', 'POST /v1/chat/completions'],
        [t + 1_500, 'read', 'upstream', 'HTTP/1.1 200 OK'],
        [t + 1_700, 'write', 'redis', '*10\r\n$7\r\nevalsha'],
      ],
    };
  }

  it('reads each stage of a request from both processes, in order', () => {
    const [a, b, c] = [request(0), request(3_000), request(6_000)];
    const marks = follow([...a.web, ...b.web, ...c.web], [...a.worker, ...b.worker, ...c.worker]);
    expect(marks).to.have.length(2); // the last request has no next one to bound it
    expect(marks[0]).to.deep.equal({
      request: 0,
      add: 100,
      addWritten: 150,
      jobRead: 400,
      job: 450,
      processor: 455,
      dispatch: 500,
      upWritten: 600,
      upRead: 1_500,
      resultWritten: 1_700,
      replyRead: 2_000,
      responseWritten: 2_100,
    });
    expect(marks[1].request).to.equal(3_000);
  });

  it('leaves out a request whose answer was written after the next request came in', () => {
    const [a, b, c] = [request(0), request(1_000), request(6_000)]; // b arrives while a is in flight
    const marks = follow([...a.web, ...b.web, ...c.web].sort((x, y) => x[0] - y[0]), [...a.worker, ...b.worker, ...c.worker].sort((x, y) => x[0] - y[0]));
    expect(marks.map((m) => m.request)).to.not.include(0);
  });
});
