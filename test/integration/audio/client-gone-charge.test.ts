import { expect } from 'chai';
import { env, startGateway, type TestGateway } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';
import { waitFor } from '../../helpers/wait';
import { makeWav, SPEECH_LIKE } from '../../helpers/wav';
import { BOUNDARY, multipartBody, transcriptionParts } from '../../helpers/multipart';
import { CreditReservation, UsageEvent, Wallet } from '../../../shared/db/models';
import { credit } from '../../../shared/billing/wallet';
import { resetConfig } from '../../../shared/config/env';
import { createRedis, type RedisClient } from '../../../shared/redis/connection';
import { keys } from '../../../shared/redis/keys';
import { UsageDrainer } from '../../../shared/metering/usage-drainer';

const speech = makeWav(SPEECH_LIKE); // 4 s of sound
const PRICE = 100; // sim-whisper's audio_second price (micro-dollars)

/**
 * The pod settles a metered transcription's wallet hold itself. A client that leaves after the worker
 * claimed delivery (its usage event written with the answer) used to have the hold released: the
 * ledger showed the transcription, the wallet was never charged. Made deterministic with a pod of the
 * test's own whose reply handling is paused: it no longer listens on its reply channels and never
 * polls for missed replies (REPLY_POLL_MS an hour), so the worker's answer waits until the client
 * leaves. Two reply channels (USAGE_OUTBOX_STREAMS=2, as on a cluster): the request's own must be read.
 */
describe('audio: a client that leaves after the worker claimed the transcription is charged for it', function () {
  this.timeout(60_000);
  let gw: TestGateway;
  let drainer: UsageDrainer;
  const url = () => gw.url;

  before(async () => {
    const saved = { REPLY_POLL_MS: process.env.REPLY_POLL_MS, USAGE_OUTBOX_STREAMS: process.env.USAGE_OUTBOX_STREAMS };
    Object.assign(process.env, { REPLY_POLL_MS: '3600000', USAGE_OUTBOX_STREAMS: '2' });
    resetConfig();
    try {
      gw = await startGateway();
    } finally {
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
      else process.env[k] = v;
      resetConfig();
    }
    // the root hooks drain the first outbox stream; this pod's second channel writes to the second
    drainer = new UsageDrainer({ stream: keys.usageOutbox(1), deadLetters: keys.usageDeadLetters(1), consumer: 'client-gone-charge' });
    await drainer.start();
  });
  after(async () => {
    await drainer?.stop();
    await gw?.close();
  });

  const post = (key: string, signal?: AbortSignal) =>
    fetch(`${url()}/v1/audio/transcriptions`, { method: 'POST', headers: { ...keyHeader(key), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, body: multipartBody(transcriptionParts(speech)), signal });

  it("a request's reply channel is its id's (ReplyHub.channelFor): the worker keeps its answer where the pod that settles it looks", async () => {
    const o = await buildOrg(env().redis);
    for (let i = 0; i < 8; i++) {
      const res = await post(o.key);
      expect(res.status, await res.text()).to.equal(200);
      const rid = res.headers.get('x-service-request-id')!;
      expect(await env().redis.exists(keys.replyResult(gw.ctx.replies.channelFor(rid), rid)), `request ${i}`).to.equal(1);
    }
  });

  for (const heard of [true, false]) {
    it(`the wallet is charged the seconds transcribed, once, and the ledger has the event once (${heard ? "the answer published to a listener, the event in the outbox" : 'nobody listening: the event held for the pod, billed by it'})`, async () => {
      const o = await buildOrg(env().redis, { policies: { audio_billing: 'metered' } });
      await credit(o.org.id, 1_000_000);
      let listener: RedisClient | undefined;
      // the pod's reply handling paused: it hears nothing more (another connection may)
      await gw.ctx.sub.sunsubscribe(...gw.ctx.replies.channels);
      try {
        if (heard) {
          listener = createRedis('subscriber');
          await listener.ssubscribe(...gw.ctx.replies.channels);
        }
        const client = new AbortController();
        const sent = post(o.key, client.signal).catch((err: Error) => err);
        const held = await waitFor(async () => CreditReservation.findOne({ where: { orgId: o.org.id } }), 10_000, 20);
        const rid = held!.requestId;
        // the worker has published the answer: delivery claimed (on whichever channel the job names)
        const claimed = await waitFor(async () => {
          for (const ch of gw.ctx.replies.channels) if ((await env().redis.get(keys.usageFate(ch, rid))) === 'delivered') return true;
          return false;
        }, 15_000, 20);
        expect(claimed, 'the worker claimed delivery').to.equal(true);
        expect((await held!.reload()).state, 'the pod has not settled yet').to.equal('reserved');
        client.abort();
        expect(await sent).to.be.instanceOf(Error);
        const ended = await waitFor(async () => ((await held!.reload()).state !== 'reserved' ? held!.state : undefined), 10_000, 20);
        expect(ended, 'charged, not released').to.equal('settled');
        const w = (await Wallet.findOne({ where: { orgId: o.org.id } }))!;
        expect(Number(w.balanceMicros)).to.equal(1_000_000 - 4 * PRICE);
        expect(Number(w.reservedMicros)).to.equal(0);
        expect(await waitFor(async () => (await UsageEvent.count({ where: { requestId: rid } })) === 1, 10_000, 50), 'in the ledger').to.equal(true);
        await new Promise((r) => setTimeout(r, 300));
        expect(await UsageEvent.count({ where: { requestId: rid } }), 'once').to.equal(1);
      } finally {
        await listener?.quit();
        await gw.ctx.sub.ssubscribe(...gw.ctx.replies.channels);
      }
    });
  }
});
