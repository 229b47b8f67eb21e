import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { hitsByUpstream, poolModel, refusingProvider, rndId, simDeployment } from '../../helpers/pool-models';
import { Image, Model, UsageEvent } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { upsertModel } from '../../../shared/catalog/catalog-ops';
import { expectCleanAndUnmetered, multipartBody, postAudio, transcriptionParts } from '../../helpers/multipart';
import { roomInMinute } from '../../helpers/wait';
import { config } from '../../../shared/config/env';
import type { DeploymentSpec } from '../../../shared/catalog/deployments';
import { makeWav, SPEECH_LIKE } from '../../helpers/wav';
import { targetOf } from '../../../api/dispatch/target';
import { taskRoute } from '../../../api/dispatch/route';
import { serveEmbeddingsJob } from '../../../workers/pools/embeddings.worker';
import { PoolState } from '../../../shared/routing/pool-state';
import { ROUTE_RESULT_KEY } from '../../../shared/queues/route-meta';
import { CancelSource } from '../../../shared/cancel-source';
import { NOOP } from '../../../shared/tracing/trace';
import type { EmbedJob } from '../../../shared/queues/payloads';
import type { JobContext } from '../../../shared/queues/create-worker';

const embed = (key: string, model: string) => call('POST', '/v1/embeddings', { headers: keyHeader(key), json: { model, input: ['pool me'] } });
const rerank = (key: string, model: string) => call('POST', '/v2/rerank', { headers: keyHeader(key), json: { model, query: 'bees', documents: ['honey bees', 'wasps'] } });

async function usageOf(r: Reply): Promise<UsageEvent[]> {
  await usageSettled();
  return UsageEvent.findAll({ where: { requestId: r.headers.get('x-service-request-id')! } });
}

/** Embeddings, rerank, image and transcription models served by pools of deployments: balanced, failed over, one usage event naming the deployment. */
describe('model pools: embeddings, rerank, images and transcription', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  afterEach(() => env().sim.knobs.reset());
  before(async () => {
    o = await buildOrg(env().redis, { laneOverrides: { 'embeddings:default': 64, 'images:interactive': 16 } });
  });
  // the suite's models leave the catalog with it (model listings elsewhere count embeddings and rerank models)
  const made: string[] = [];
  const suiteModel = async (...args: Parameters<typeof poolModel>) => {
    const id = await poolModel(...args);
    made.push(id);
    return id;
  };
  after(async () => {
    await Model.destroy({ where: { publicId: made } });
    await bumpEpoch(env().redis);
  });

  it('embeddings: every request answered while one of two deployments refuses connections and another answers 500; headers and one usage event name the deployment that served', async () => {
    const down = { name: 'down', provider: await refusingProvider(), upstream: 'nothing' };
    const failing = simDeployment('failing');
    const up = simDeployment('up');
    env().sim.knobs.set(failing.upstream, { status: 500 });
    const model = await suiteModel([down, failing, up], { capabilities: { embeddings: true } });
    const replies = await Promise.all(Array.from({ length: 12 }, () => embed(o.key, model)));
    for (const r of replies) {
      expect(r.status, r.text).to.equal(200);
      expect(r.body.model).to.equal(model);
      expect(r.body.data[0].embedding).to.be.an('array');
      expect(r.headers.get('x-service-deployment')).to.equal('up');
      expect(Number(r.headers.get('x-service-attempts'))).to.be.within(1, 3);
    }
    const events = await usageOf(replies[0]);
    expect(events.map((e) => [e.modality, e.deployment])).to.deep.equal([['embeddings', 'up']]);
    expect(events[0].inputTokens).to.be.above(0);
    expect(hitsByUpstream().get(failing.upstream) ?? 0, 'cooled down after its failures: not every request tried it').to.be.below(12);

    // the official SDK sees the same pool
    const c = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const { data, response } = await c.embeddings.create({ model, input: 'through the SDK' }).withResponse();
    expect(data.data[0].embedding.length).to.be.above(0);
    expect(response.headers.get('x-service-deployment')).to.equal('up');
  });

  it('embeddings: weights are honoured between two healthy deployments (3:1 over 200 requests)', async function () {
    this.timeout(30_000);
    const heavy = simDeployment('heavy', { weight: 3 });
    const light = simDeployment('light', { weight: 1 });
    const model = await suiteModel([heavy, light], { capabilities: { embeddings: true } });
    for (let i = 0; i < 200; i += 20) await Promise.all(Array.from({ length: 20 }, () => embed(o.key, model)));
    const hits = hitsByUpstream();
    const share = (hits.get(heavy.upstream) ?? 0) / 200;
    expect((hits.get(heavy.upstream) ?? 0) + (hits.get(light.upstream) ?? 0)).to.equal(200);
    expect(share).to.be.within(0.65, 0.85);
  });

  it('rerank: a failing Cohere deployment is failed over; a deployment of a kind without rerank is left out of the pool', async () => {
    const failing = simDeployment('rr-failing', { provider: 'simulator-cohere' });
    const up = simDeployment('rr-up', { provider: 'simulator-cohere' });
    const openaiKind = simDeployment('rr-openai');
    env().sim.knobs.set(failing.upstream, { status: 503 });
    const model = await suiteModel([failing, up, openaiKind], { capabilities: { rerank: true } });
    const replies = await Promise.all(Array.from({ length: 8 }, () => rerank(o.key, model)));
    for (const r of replies) {
      expect(r.status, r.text).to.equal(200);
      expect(r.body.results).to.have.length(2);
      expect(r.headers.get('x-service-deployment')).to.equal('rr-up');
    }
    expect(hitsByUpstream().get(openaiKind.upstream) ?? 0, 'never sent to a kind that cannot rerank').to.equal(0);
    const events = await usageOf(replies[0]);
    expect(events.map((e) => [e.modality, e.deployment])).to.deep.equal([['rerank', 'rr-up']]);
  });

  it('a non-retryable upstream answer (400) is answered as it is, not retried, and nothing is billed', async () => {
    const bad = simDeployment('bad');
    const other = simDeployment('other');
    env().sim.knobs.set(bad.upstream, { status: 400 });
    env().sim.knobs.set(other.upstream, { status: 400 });
    const model = await suiteModel([bad, other], { capabilities: { embeddings: true } });
    const r = await embed(o.key, model);
    expect(r.status).to.equal(400);
    expect(Number(r.headers.get('x-service-attempts'))).to.equal(1);
    expect(env().sim.log.entries.filter((e) => e.path === '/v1/embeddings')).to.have.length(1);
    expect(await usageOf(r)).to.deep.equal([]);
  });

  it('images: a generation is failed over from a deployment answering 500 to a healthy one (the image stored once, one usage event naming it)', async () => {
    const failing = simDeployment('img-failing');
    const up = simDeployment('img-up');
    env().sim.knobs.set(failing.upstream, { status: 500 });
    const model = await suiteModel([failing, up], { capabilities: { image_generation: true } });
    const replies = await Promise.all(Array.from({ length: 4 }, () => call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: { model, prompt: 'a pooled bee', size: '1024x1024' } })));
    for (const r of replies) {
      expect(r.status, r.text).to.equal(200);
      expect(r.body.data).to.have.length(1);
      expect(r.headers.get('x-service-deployment')).to.equal('img-up');
    }
    const events = await usageOf(replies[0]);
    expect(events.map((e) => [e.modality, e.deployment])).to.deep.equal([['image', 'img-up']]);
    expect(await Image.count({ where: { requestId: replies[0].headers.get('x-service-request-id')! } }), 'stored once').to.equal(1);
  });

  it("rolling deploys: a job from an older pod (no route) is served from its target and its answer carries no route key, which that pod would pass on in the body", async () => {
    const model = await suiteModel([simDeployment('only')], { capabilities: { embeddings: true } });
    const m = (await env().gw.ctx.catalog.get(model))!;
    const job = { requestId: `req_${rndId()}`, replyTo: 'x', deadline: Date.now() + 10_000, orgId: o.org.id, projectId: null, apiKeyId: null, publicModel: model, lane: 'default', stream: false,
      operation: 'embed' as const, target: targetOf(m), input: 'old pod', encodingFormat: 'float' as const, countedTokens: 2 } as unknown as EmbedJob;
    const usage: string[] = [];
    const ctx = { signal: new CancelSource(), emit: () => undefined, usage: (modality: string) => void usage.push(modality), span: NOOP, route: () => undefined } as unknown as JobContext;
    const state = new PoolState(env().redis, { probeLeaseMs: 5000, inflightLeaseMs: 60_000, backoffBaseMs: 500, backoffMaxMs: 30_000 });
    const old = await serveEmbeddingsJob(state, job, ctx);
    expect(old).to.have.property('data');
    expect(old, 'no route key for an older pod').to.not.have.property(ROUTE_RESULT_KEY);
    const current = await serveEmbeddingsJob(state, Object.assign({}, job, { route: taskRoute(m, 'embeddings') }), ctx);
    expect(current[ROUTE_RESULT_KEY]).to.deep.include({ deployment: 'only', attempts: 1 });
    expect(usage).to.deep.equal(['embeddings', 'embeddings']);
  });

  /** A transcription model served by a pool of these deployments. */
  const transcriptionPool = async (deployments: DeploymentSpec[]) => {
    const id = `pool-${rndId()}`;
    await upsertModel({ id, deployments, capabilities: { transcription: true }, config: { audio_config: { max_duration_seconds: 3600, supports_word_timestamps: true } }, prices: { audio_second: 100 } });
    await bumpEpoch(env().redis);
    made.push(id);
    return id;
  };
  const transcribe = (key: string, model: string) => postAudio('/v1/audio/transcriptions', keyHeader(key), multipartBody(transcriptionParts(makeWav(SPEECH_LIKE), [], model)));

  it('transcription: a deployment answering 500 is failed over to a healthy one; the header and the usage event name it, the transcript comes back', async () => {
    const failing = simDeployment('stt-failing');
    const up = simDeployment('stt-up');
    env().sim.knobs.set(failing.upstream, { status: 500 });
    const id = await transcriptionPool([failing, up]);
    const replies = [];
    for (let i = 0; i < 3; i++) replies.push(await transcribe(o.key, id));
    for (const r of replies) {
      expect(r.status, r.text).to.equal(200);
      expect(r.body.text).to.be.a('string').and.not.equal('');
      expect(r.headers.get('x-service-deployment')).to.equal('stt-up');
    }
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { requestId: replies[0].requestId } });
    expect(events.map((e) => [e.modality, e.deployment])).to.deep.equal([['audio', 'stt-up']]);
  });

  it('transcription: while every deployment cools down after failing, 502 audio_backend_unavailable with the cooldown left as Retry-After (as a failing single backend answers), at once and unmetered', async function () {
    this.timeout(20_000);
    const a = simDeployment('stt-a');
    const b = simDeployment('stt-b');
    env().sim.knobs.set(a.upstream, { status: 503, retryAfter: 8 });
    env().sim.knobs.set(b.upstream, { status: 503, retryAfter: 8 });
    const id = await transcriptionPool([a, b]);
    const first = await transcribe(o.key, id);
    expect(first.status, first.text).to.equal(502);
    expect(first.body.error.code).to.equal('audio_backend_unavailable');
    expect(first.headers.get('x-service-attempts'), 'each deployment once').to.equal('2');
    const t = Date.now();
    const second = await transcribe(o.key, id);
    expect(Date.now() - t, 'not held for the 8 s cooldown').to.be.below(2000);
    expect(second.status, second.text).to.equal(502);
    expect(second.body.error.code).to.equal('audio_backend_unavailable');
    expect(Number(second.headers.get('retry-after')), 'the cooldown left').to.be.within(6, 8);
    expect(second.headers.get('x-service-deployment'), 'no attempt was made').to.equal(null);
    expect((hitsByUpstream().get(a.upstream) ?? 0) + (hitsByUpstream().get(b.upstream) ?? 0), 'no call during the cooldown').to.equal(2);
    await expectCleanAndUnmetered(second.requestId);
  });

  it('transcription: every deployment at its rpm answers 429 audio_backend_rate_limited before the deadline (not the chat lane\'s CONCURRENT_REQUEST_LIMIT_EXCEEDED)', async function () {
    this.timeout(30_000);
    expect(await roomInMinute(15_000), 'the three requests inside one minute window').to.equal(true);
    const id = await transcriptionPool([simDeployment('stt-rpm', { rpm: 1 })]);
    expect((await transcribe(o.key, id)).status).to.equal(200);
    const t = Date.now();
    const r = await transcribe(o.key, id);
    expect(r.status, r.text).to.equal(429);
    expect(r.body.error.code).to.equal('audio_backend_rate_limited');
    expect(Number(r.headers.get('retry-after'))).to.be.at.least(1);
    expect(Date.now() - t, 'answered by the worker before the deadline').to.be.below(config().audioDeadlineMs);
    expect(env().sim.log.entries, 'the deployment not called past its rpm').to.have.length(1);
    await expectCleanAndUnmetered(r.requestId);
  });
});
