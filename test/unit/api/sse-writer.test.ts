import { expect } from 'chai';
import type { Response } from 'express';
import { SseWriter } from '../../../api/sse';

/** A response that records what reaches the socket: each write and the end, as one string each. */
function recordingResponse() {
  const writes: string[] = [];
  const res = {
    writableEnded: false,
    destroyed: false,
    status: () => res,
    setHeader: () => res,
    write: (t: string) => (writes.push(t), true),
    end: (t?: string) => {
      res.writableEnded = true;
      writes.push(`end:${t ?? ''}`);
    },
  };
  return { res: res as unknown as Response, writes };
}

const tick = () => new Promise<void>((r) => process.nextTick(r));
const turn = () => new Promise<void>((r) => setImmediate(r));

describe('SseWriter: socket writes', () => {
  it('writes the first events at the end of their tick, before the turn ends (time to first token)', async () => {
    const { res, writes } = recordingResponse();
    const sse = new SseWriter(res);
    sse.send('a');
    sse.send('b');
    expect(writes).to.deep.equal([]);
    await tick();
    expect(writes).to.deep.equal(['data: a\n\ndata: b\n\n']);
  });

  it('writes the events of each later tick in one write, and what is pending with the end', async () => {
    const { res, writes } = recordingResponse();
    const sse = new SseWriter(res);
    sse.send('first');
    await tick();
    sse.send('c');
    sse.send('d'); // another message of the same read
    await tick();
    sse.send('last');
    sse.send('[DONE]');
    sse.end();
    await turn();
    expect(writes).to.deep.equal(['data: first\n\n', 'data: c\n\ndata: d\n\n', 'end:data: last\n\ndata: [DONE]\n\n']);
  });
});
