import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { makeWav, SPEECH_LIKE } from '../../helpers/wav';
import { expectCleanAndUnmetered, multipartBody, postAudio, transcriptionParts } from '../../helpers/multipart';
import { CreditReservation, Wallet } from '../../../shared/db/models';
import { credit } from '../../../shared/billing/wallet';

const PATH = '/v1/audio/transcriptions';
const speech = makeWav(SPEECH_LIKE); // 4 s of sound
const silent = makeWav([{ seconds: 3 }]);
const PRICE = 100; // sim-whisper's audio_second price (micro-dollars)

describe('audio billing by plan policy (audio_billing: included | metered)', () => {
  it('metered: the wallet pays audio_second x the seconds transcribed; the hold is lifted', async () => {
    const o = await buildOrg(env().redis, { policies: { audio_billing: 'metered' } });
    await credit(o.org.id, 1_000_000);
    const r = await postAudio(PATH, keyHeader(o.key), multipartBody(transcriptionParts(speech)));
    expect(r.status).to.equal(200);
    const w = (await Wallet.findOne({ where: { orgId: o.org.id } }))!;
    expect(Number(w.balanceMicros)).to.equal(1_000_000 - 4 * PRICE);
    expect(Number(w.reservedMicros)).to.equal(0);
    expect((await CreditReservation.findOne({ where: { requestId: r.requestId } }))!.state).to.equal('settled');

    const quiet = await postAudio(PATH, keyHeader(o.key), multipartBody(transcriptionParts(silent)));
    expect(quiet.status).to.equal(200);
    expect(Number((await w.reload()).balanceMicros)).to.equal(1_000_000 - 4 * PRICE); // speech-free: nothing
  });

  it('metered without enough credit: 402 insufficient_credits before any work, nothing metered', async () => {
    const o = await buildOrg(env().redis, { policies: { audio_billing: 'metered' } });
    await credit(o.org.id, 1000); // the hold is price x the model's 3600 s limit
    const r = await postAudio(PATH, keyHeader(o.key), multipartBody(transcriptionParts(speech)));
    expect(r.status).to.equal(402);
    expect(r.body.error.code).to.equal('insufficient_credits');
    expect(r.text).not.to.match(/at .*\.js:\d+/);
    await expectCleanAndUnmetered(r.requestId);
    expect(Number((await Wallet.findOne({ where: { orgId: o.org.id } }))!.balanceMicros)).to.equal(1000);
  });

  it('included (the default, or from the plan): no wallet needed, nothing charged', async () => {
    const o = await buildOrg(env().redis);
    const r = await postAudio(PATH, keyHeader(o.key), multipartBody(transcriptionParts(speech)));
    expect(r.status).to.equal(200);
    expect(await Wallet.findOne({ where: { orgId: o.org.id } })).to.equal(null);
  });

  it('the audio models listing shows the org\'s effective policy and billing', async () => {
    const metered = await buildOrg(env().redis, { entitlements: { policies: { audio_billing: 'metered' } } });
    const included = await buildOrg(env().redis);
    const m = await call('GET', '/v1/audio/transcriptions/models', { headers: keyHeader(metered.key) });
    const i = await call('GET', '/v1/audio/transcriptions/models', { headers: keyHeader(included.key) });
    const whisper = (r: typeof m) => r.body.data.find((x: { id: string }) => x.id === 'sim-whisper');
    expect(whisper(m)).to.include({ policy: 'on', billing: 'metered' });
    expect(whisper(m).pricing).to.deep.equal({ audio_second: PRICE });
    expect(whisper(i)).to.include({ policy: 'on', billing: 'included' });
  });
});
