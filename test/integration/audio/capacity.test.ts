import { expect } from 'chai';
import { Job } from 'bullmq';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';
import { makeWav, SPEECH_LIKE } from '../../helpers/wav';
import { expectCleanAndUnmetered, multipartBody, postAudio, spoolFiles, transcriptionParts } from '../../helpers/multipart';
import { waitFor } from '../../helpers/wait';
import { pools } from '../../helpers/pools';
import { Model, Provider, UsageEvent } from '../../../shared/db/models';
import { outboxDuring, usageSettled } from '../../helpers/usage';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { config } from '../../../shared/config/env';
import { leasesFreed } from '../../helpers/leases';
import { roomInMinute } from '../../helpers/wait';
import { updateKeyControls } from '../../../shared/tenancy/ops';

const PATH = '/v1/audio/transcriptions';
const speech = makeWav(SPEECH_LIKE);
const body = (model = 'sim-whisper') => multipartBody(transcriptionParts(speech, [], model));
const upstreamCalls = () => env().sim.log.entries.filter((e) => e.path === PATH);

/** Starts a transcription the test can abort; resolves to the response or the abort error. */
function inFlight(key: string) {
  const ac = new AbortController();
  const done = fetch(`${env().gw.url}${PATH}`, {
    method: 'POST',
    headers: { ...keyHeader(key), 'content-type': `multipart/form-data; boundary=----gwtestBoundary7MA4YWxkTrZu0gW` },
    body: body(),
    signal: ac.signal,
  }).catch((e: Error) => e);
  return { abort: () => ac.abort(), done };
}

describe('audio transcription: capacity, backend failures, deadlines and cancellation', () => {
  let o: TestOrg;
  const leases = () => env().gw.ctx.leases;
  before(async () => {
    o = await buildOrg(env().redis);
  });
  beforeEach(resetSim);

  it('429 audio_lanes_exhausted past the org allowance, with Retry-After; the lease frees when the first ends', async () => {
    const small = await buildOrg(env().redis, { laneOverrides: { 'audio:default': 1 } });
    env().sim.knobs.set('sim-whisper-1', { hang: true });
    const first = inFlight(small.key);
    try {
      expect(await waitFor(() => upstreamCalls().length === 1, 5000), 'first reached the upstream').to.equal(true);
      const r = await postAudio(PATH, keyHeader(small.key), body());
      expect(r.status, r.text).to.equal(429);
      expect(r.body.error.code).to.equal('audio_lanes_exhausted');
      expect(Number(r.headers.get('retry-after'))).to.be.at.least(1);
      await expectCleanAndUnmetered(r.requestId, { othersInFlight: true });
    } finally {
      first.abort();
    }
    await first.done;
    expect(await waitFor(async () => (await leases().count(small.org.id, 'audio', 'default')) === 0, 3000)).to.equal(true);
    env().sim.knobs.reset();
    const again = await postAudio(PATH, keyHeader(small.key), body());
    expect(again.status, again.text).to.equal(200);
  });

  it('503 audio_at_capacity at the gateway-wide ceiling, whatever the org; Retry-After; the key\'s rpm count is given back, as a full lane\'s refusal gives it', async function () {
    this.timeout(50_000);
    const ceiling = config().audioMaxConcurrent;
    env().sim.knobs.set('sim-whisper-1', { hang: true });
    const orgs = await Promise.all(Array.from({ length: ceiling }, () => buildOrg(env().redis)));
    const fresh = await buildOrg(env().redis);
    await updateKeyControls(env().redis, fresh.keyId, { rpm: 5 });
    expect(await roomInMinute(20_000)).to.equal(true);
    const running = orgs.map((x) => inFlight(x.key));
    try {
      expect(await waitFor(async () => (await leases().count('gateway', 'audio', 'ceiling')) === ceiling, 5000)).to.equal(true);
      const r = await postAudio(PATH, keyHeader(fresh.key), body());
      expect(r.status, r.text).to.equal(503);
      expect(r.body.error.code).to.equal('audio_at_capacity');
      expect(Number(r.headers.get('retry-after'))).to.be.at.least(1);
      expect(r.headers.get('x-ratelimit-remaining-requests'), 'the figures as counted at admission').to.equal('4');
      await expectCleanAndUnmetered(r.requestId, { othersInFlight: true });
      expect(await leasesFreed(leases(), fresh.org.id, 'audio', 'default'), 'its org lease was given back').to.equal(true);
    } finally {
      running.forEach((x) => x.abort());
      await Promise.all(running.map((x) => x.done));
    }
    expect(await waitFor(async () => (await leases().count('gateway', 'audio', 'ceiling')) === 0, 3000)).to.equal(true);
    expect(await waitFor(() => spoolFiles().length === 0, 3000), 'every spool file deleted on cancellation').to.equal(true);
    env().sim.knobs.reset();
    const again = await postAudio(PATH, keyHeader(fresh.key), body());
    expect(again.status, again.text).to.equal(200);
    expect(again.headers.get('x-ratelimit-remaining-requests'), 'the refused request left the minute: this one is the first counted').to.equal('4');
  });

  it('429 audio_backend_rate_limited when the backend keeps shedding, with Retry-After', async () => {
    env().sim.knobs.set('sim-whisper-1', { status: 429, retryAfter: 0 });
    const r = await postAudio(PATH, keyHeader(o.key), body());
    expect(r.status, r.text).to.equal(429);
    expect(r.body.error.code).to.equal('audio_backend_rate_limited');
    expect(r.headers.get('retry-after')).to.be.a('string');
    expect(upstreamCalls().length).to.equal(3); // first try and two retries
    await expectCleanAndUnmetered(r.requestId);
  });

  it('a single backend 503 is retried and the transcription succeeds, metered once', async () => {
    env().sim.knobs.set('sim-whisper-1', { status: 503, statusTimes: 1, retryAfter: 0 });
    const { result: r, records } = await outboxDuring(() => postAudio(PATH, keyHeader(o.key), body()));
    expect(r.status, r.text).to.equal(200);
    expect(upstreamCalls().length).to.equal(2);
    expect(spoolFiles()).to.deep.equal([]);
    const expected = { requestId: r.requestId, orgId: o.org.id, apiKeyId: o.keyId, model: 'sim-whisper', modality: 'audio' };
    const mine = records.filter((u) => u.requestId === r.requestId);
    expect(mine, 'one outbox entry despite the retry').to.have.length(1);
    expect(mine[0]).to.deep.include(expected);
    expect(mine[0].units).to.deep.equal({ audio_duration_ms: 4000 });
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { requestId: r.requestId } });
    expect(events, 'one usage event despite the retry').to.have.length(1);
    expect(events[0]).to.deep.include(expected);
    expect(events[0].units).to.deep.equal({ audio_duration_ms: 4000 });
  });

  for (const [name, knobs] of [
    ['a 500', { status: 500 }],
    ['a persistent 503', { status: 503, retryAfter: 0 }],
    ['a malformed body', { malformed: true }],
    ['a 404 (no such model or deployment at the backend: the configuration, not the file)', { status: 404 }],
  ] as const) {
    it(`502 audio_backend_unavailable on ${name}, never quoting the backend`, async () => {
      env().sim.knobs.set('sim-whisper-1', knobs);
      const r = await postAudio(PATH, keyHeader(o.key), body());
      expect(r.status, r.text).to.equal(502);
      expect(r.body.error.code).to.equal('audio_backend_unavailable');
      expect(r.body.error.message).to.not.include('simulated');
      expect(r.headers.get('retry-after'), 'docs/audio.md: Retry-After').to.be.a('string');
      await expectCleanAndUnmetered(r.requestId);
    });
  }

  it('502 audio_backend_unavailable when the backend is unreachable', async () => {
    const dead = await Provider.create({ name: `dead-${Date.now()}`, kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEncrypted: null });
    await Model.create({
      publicId: 'test-whisper-dead', providerId: dead.id, upstreamName: 'w', displayName: null, capabilities: { transcription: true },
      contextWindow: null, maxOutputTokens: null, config: { audio_config: { max_duration_seconds: 3600, supports_word_timestamps: true } },
    });
    await bumpEpoch(env().redis);
    try {
      const r = await postAudio(PATH, keyHeader(o.key), body('test-whisper-dead'));
      expect(r.status, r.text).to.equal(502);
      expect(r.body.error.code).to.equal('audio_backend_unavailable');
      await expectCleanAndUnmetered(r.requestId);
    } finally {
      await Model.destroy({ where: { publicId: 'test-whisper-dead' } });
      await dead.destroy();
      await bumpEpoch(env().redis);
    }
  });

  it('a backend 422 (it refused the file) is 400 invalid_request, unmetered', async () => {
    env().sim.knobs.set('sim-whisper-1', { status: 422 });
    const r = await postAudio(PATH, keyHeader(o.key), body());
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error.code).to.equal('invalid_request');
    await expectCleanAndUnmetered(r.requestId);
  });

  it('audio the backend cannot decode is 400 invalid_request, unmetered', async () => {
    const parts = transcriptionParts(Buffer.from('ID3\u0003 definitely not a wav file '.repeat(50)));
    parts[0] = { ...parts[0], filename: 'song.mp3', contentType: 'audio/mpeg' };
    const r = await postAudio(PATH, keyHeader(o.key), multipartBody(parts));
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error.code).to.equal('invalid_request');
    expect((upstreamCalls()[0].body as { file: { name: string } }).file.name).to.equal('audio.mp3');
    await expectCleanAndUnmetered(r.requestId);
  });

  it('504 audio_deadline_exceeded at the overall deadline; the upstream call is aborted', async function () {
    this.timeout(config().audioDeadlineMs + 10_000);
    env().sim.knobs.set('sim-whisper-1', { hang: true });
    const t = Date.now();
    const r = await postAudio(PATH, keyHeader(o.key), body());
    expect(r.status, r.text).to.equal(504);
    expect(r.body.error.code).to.equal('audio_deadline_exceeded');
    expect(Date.now() - t).to.be.within(config().audioDeadlineMs - 200, config().audioDeadlineMs + 3000);
    expect(await waitFor(() => upstreamCalls()[0]?.aborted === true, 3000), 'upstream aborted').to.equal(true);
    await expectCleanAndUnmetered(r.requestId);
  });

  it('a client that leaves while the backend works cancels it: upstream aborted, spool deleted, leases freed, nothing metered', async () => {
    env().sim.knobs.set('sim-whisper-1', { hang: true });
    const x = inFlight(o.key);
    expect(await waitFor(() => upstreamCalls().length === 1, 5000)).to.equal(true);
    expect(spoolFiles(), 'the file is spooled while the job runs').to.have.length(1);
    const requestId = spoolFiles()[0].split('-')[0];
    x.abort();
    await x.done;
    expect(await waitFor(() => upstreamCalls()[0].aborted, 3000), 'upstream aborted').to.equal(true);
    expect(await waitFor(async () => (await leases().count(o.org.id, 'audio', 'default')) === 0, 3000)).to.equal(true);
    expect(await waitFor(async () => (await leases().count('gateway', 'audio', 'ceiling')) === 0, 3000)).to.equal(true);
    await expectCleanAndUnmetered(requestId);
  });

  it('a job still waiting when its client leaves is removed and its spool file deleted', async () => {
    const audioWorkers = pools().workers.filter((w) => w.name === 'audio');
    expect(audioWorkers).to.have.length(1);
    await Promise.all(audioWorkers.map((w) => w.pause()));
    try {
      const x = inFlight(o.key);
      const queue = env().gw.ctx.queues.get('audio');
      const waiting = await waitFor(async () => (await queue.getJobs(['prioritized', 'wait'])).find((j) => j.data.orgId === o.org.id), 3000);
      expect(waiting, 'job queued').to.not.equal(undefined);
      expect(spoolFiles()).to.have.length(1);
      x.abort();
      await x.done;
      expect(await waitFor(async () => (await Job.fromId(queue, waiting!.id!)) === undefined, 3000)).to.equal(true);
      await expectCleanAndUnmetered(waiting!.id!);
    } finally {
      audioWorkers.forEach((w) => w.resume());
    }
    expect(upstreamCalls()).to.have.length(0);
  });
});
