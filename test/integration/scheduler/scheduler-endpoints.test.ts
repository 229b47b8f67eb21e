import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { buildPlatformKey, startAdmin } from '../../helpers/admin';
import { backlog, peakWhile, schedulerRows, waitFor, workerOf } from '../../helpers/scheduler';
import { config } from '../../../shared/config/env';
import { readEpoch } from '../../../shared/cache/epoch';
import { SchedulerEndpoint, UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';
import { pools } from '../../helpers/pools';
import { startPools } from '../../../workers/main';
import { updateKeyControls } from '../../../shared/tenancy/ops';
import { roomInMinute } from '../../helpers/wait';

const QUEUE = 'chat-background' as const;
const chat = (key: string, content = 'scheduler test') =>
  call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model: 'sim-chat-background', messages: [{ role: 'user', content }] } });

describe('scheduler-endpoints take effect on running processes without a restart', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  let key: string;
  let org: TestOrg;
  const rows = schedulerRows(() => ({ url: admin.url, key }));
  const worker = () => workerOf(QUEUE);
  const active = () => env().gw.ctx.queues.get(QUEUE).getActiveCount();

  before(async () => {
    admin = await startAdmin();
    ({ key } = await buildPlatformKey());
    org = await buildOrg(env().redis, { plan: 'pro', laneOverrides: { 'chat:background': 100 } });
  });
  beforeEach(resetSim);
  afterEach(async () => {
    // other tests share these pools: back to the env defaults, running
    await rows.drop(QUEUE);
    await waitFor(() => worker().concurrency === config().chatBackgroundConcurrency && !worker().isPaused(), 3000);
    env().sim.knobs.reset();
  });
  after(() => admin.close());

  it('changes a running worker\'s concurrency on a row write, and jobs run that many at a time', async function () {
    this.timeout(30_000);
    const fallback = config().chatBackgroundConcurrency;
    expect(worker().concurrency).to.equal(fallback);
    env().sim.knobs.set('sim-chat-1', { delayMs: 300 });

    await rows.put(QUEUE, { concurrency: 2 });
    expect(await waitFor(() => worker().concurrency === 2, 2000), 'concurrency 2 applied').to.equal(true);
    const t0 = Date.now();
    const two = await peakWhile(active, Promise.all(Array.from({ length: 6 }, (_, i) => chat(org.key, `two ${i}`))));
    const elapsed = Date.now() - t0;
    expect(two.result.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200, 200]);
    expect(two.peak, 'at most two at a time').to.equal(2);
    expect(elapsed, '6 jobs of 300 ms two at a time take three rounds').to.be.at.least(850);

    await rows.put(QUEUE, { concurrency: 6 });
    expect(await waitFor(() => worker().concurrency === 6, 2000), 'concurrency 6 applied').to.equal(true);
    const six = await peakWhile(active, Promise.all(Array.from({ length: 6 }, (_, i) => chat(org.key, `six ${i}`))));
    expect(six.result.every((r) => r.status === 200)).to.equal(true);
    expect(six.peak, 'more than two at a time once raised').to.be.above(2);

    // a null concurrency falls back to the env default
    await rows.put(QUEUE, { concurrency: null });
    expect(await waitFor(() => worker().concurrency === fallback, 2000)).to.equal(true);
  });

  it('enabled:false holds the queue\'s jobs (waiting, not run) and enabled:true releases them', async function () {
    this.timeout(20_000);
    await rows.put(QUEUE, { enabled: false });
    expect(await waitFor(() => worker().isPaused(), 2000), 'worker paused').to.equal(true);
    const pending = Promise.all([chat(org.key, 'held 1'), chat(org.key, 'held 2')]);
    expect(await waitFor(async () => (await backlog(QUEUE)) === 2, 3000), 'both jobs queued').to.equal(true);
    await new Promise((r) => setTimeout(r, 200)); // an unpaused worker would have taken them within milliseconds
    expect(env().sim.log.entries, 'nothing reached the upstream while disabled').to.have.length(0);
    expect(await backlog(QUEUE)).to.equal(2);

    await rows.put(QUEUE, { enabled: true });
    const replies = await pending;
    expect(replies.map((r) => r.status)).to.deep.equal([200, 200]);
    expect(env().sim.log.entries).to.have.length(2);
    expect(worker().isPaused()).to.equal(false);
  });

  it('a process started while its queue is disabled never starts that worker until the row enables it', async function () {
    this.timeout(20_000);
    await rows.put(QUEUE, { enabled: false });
    const fresh = await startPools(['chat']); // a worker process starting now
    try {
      const bg = fresh.workers.find((w) => w.name === QUEUE)!;
      const fg = fresh.workers.find((w) => w.name === 'chat-interactive')!;
      expect(bg.isPaused(), 'paused from the start').to.equal(true);
      expect(bg.isRunning(), 'its loop never started: no fetch was in flight').to.equal(false);
      expect(await waitFor(() => fg.isRunning(), 2000), 'the enabled queue runs').to.equal(true);
      await rows.put(QUEUE, { enabled: true });
      expect(await waitFor(() => bg.isRunning() && !bg.isPaused(), 3000), 'started once enabled').to.equal(true);
    } finally {
      await fresh.close();
    }
  });

  it('max_waiting refuses new work with the queue family\'s 429 and Retry-After once the backlog is full, billing nothing', async function () {
    // 20 s ran out twice in full CI runs on a loaded machine (not reproduced alone): its waits are each
    // bounded and asserted; the queued requests' answers after the resume are what can take long. The
    // bounded waits add up to 46 s: the case's own limit is above that, so a stop says where it stopped.
    this.timeout(60_000);
    await rows.put(QUEUE, { enabled: false, max_waiting: 2 });
    expect(await waitFor(() => worker().isPaused(), 2000)).to.equal(true);
    const pending = Promise.all([chat(org.key, 'w1'), chat(org.key, 'w2')]);
    expect(await waitFor(async () => (await backlog(QUEUE)) === 2, 3000)).to.equal(true);
    // the web pod follows the cache epoch over pub/sub: on a loaded machine its settings can trail the
    // worker's pause, and a w3 sent before they arrive is queued behind the paused worker (the case then
    // hung to its time limit without an assertion, once in a full CI run)
    const webCap = async () => (await env().gw.ctx.directory.queueSettings(QUEUE)).maxWaiting;
    expect(await waitFor(async () => (await webCap()) === 2, 5000), 'the web pod has max_waiting 2').to.equal(true);

    const refused = await chat(org.key, 'w3');
    expect(refused.status, refused.text).to.equal(429);
    expect(refused.body.error.code).to.equal('CONCURRENT_REQUEST_LIMIT_EXCEEDED');
    expect(Number(refused.headers.get('retry-after'))).to.be.at.least(1);
    const rid = refused.headers.get('x-service-request-id')!;
    expect(rid).to.match(/^req_[0-9a-f]{24}$/);
    expect(await env().gw.ctx.queues.get(QUEUE).getJob(rid), 'never enqueued').to.equal(undefined);
    expect(await backlog(QUEUE)).to.equal(2);

    // raising the cap admits again at once (the pods' cached settings follow the cache epoch)
    await rows.put(QUEUE, { max_waiting: 3 });
    expect(await waitFor(async () => (await webCap()) === 3, 5000), 'the web pod has max_waiting 3').to.equal(true);
    const admitted = chat(org.key, 'w4');
    let early: string | undefined; // if w4 was answered instead of queued, say how
    void admitted.then((r) => (early = `w4 answered ${r.status} ${r.text}`));
    expect(await waitFor(async () => (await backlog(QUEUE)) === 3, 3000), early ?? 'w4 queued').to.equal(true);

    await rows.put(QUEUE, { enabled: true });
    // Bounded, saying where it stopped: this case ran out of its whole time limit in a few loaded CI
    // runs without an assertion, and was never reproduced alone
    expect(await waitFor(() => !worker().isPaused(), 8000), 'the worker resumed (broadcast, else the 5 s poll)').to.equal(true);
    const answered = await Promise.race([Promise.all([pending, admitted]), new Promise<undefined>((r) => setTimeout(r, 20_000, undefined))]);
    const where = async () => `not answered in 20 s after the resume: jobs ${JSON.stringify(await env().gw.ctx.queues.get(QUEUE).getJobCounts())}, worker paused ${worker().isPaused()} running ${worker().isRunning()}`;
    expect(answered, answered ? '' : await where()).to.not.equal(undefined);
    expect(answered![0].map((r) => r.status)).to.deep.equal([200, 200]);
    expect(answered![1].status).to.equal(200);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: rid } }), 'the refused request billed nothing').to.equal(0);
    expect(env().sim.log.entries.map((e) => JSON.stringify(e)).join()).not.to.include('w3');
  });

  it("max_waiting's 429 carries the key's rate-limit headers, as a full lane's does, and gives the key's counts back", async function () {
    this.timeout(40_000);
    const limited = await buildOrg(env().redis, { plan: 'pro', laneOverrides: { 'chat:background': 100 } });
    await updateKeyControls(env().redis, limited.keyId, { rpm: 10 });
    expect(await roomInMinute(20_000)).to.equal(true);
    await rows.put(QUEUE, { enabled: false, max_waiting: 1 });
    expect(await waitFor(() => worker().isPaused(), 2000)).to.equal(true);
    const webCap = async () => (await env().gw.ctx.directory.queueSettings(QUEUE)).maxWaiting;
    expect(await waitFor(async () => (await webCap()) === 1, 5000), 'the web pod has max_waiting 1').to.equal(true);
    const pending = chat(org.key, 'm1');
    expect(await waitFor(async () => (await backlog(QUEUE)) === 1, 3000)).to.equal(true);

    const refused = await chat(limited.key, 'm2');
    expect([refused.status, refused.body.error.code]).to.deep.equal([429, 'CONCURRENT_REQUEST_LIMIT_EXCEEDED']);
    expect(Number(refused.headers.get('retry-after'))).to.be.at.least(1);
    expect([refused.headers.get('x-ratelimit-limit-requests'), refused.headers.get('x-ratelimit-remaining-requests')], 'the figures as counted at admission').to.deep.equal(['10', '9']);
    expect(refused.headers.get('x-ratelimit-reset-requests')).to.match(/^\d+(\.\d+)?m?s$|^1m0s$/);

    await rows.put(QUEUE, { enabled: true, max_waiting: null });
    expect(await waitFor(async () => (await webCap()) === null, 5000)).to.equal(true);
    expect(await waitFor(() => !worker().isPaused(), 8000)).to.equal(true);
    expect((await pending).status).to.equal(200);
    const served = await chat(limited.key, 'm3');
    expect(served.status, served.text).to.equal(200);
    expect(served.headers.get('x-ratelimit-remaining-requests'), 'the refused request was given back').to.equal('9');
  });

  it('priority_step multiplies the fair-share weight of queued jobs (0: plain FIFO)', async function () {
    this.timeout(20_000);
    const priorities = async () =>
      (await env().gw.ctx.queues.get(QUEUE).getJobs(['prioritized', 'waiting'])).filter((j) => j.data.orgId === org.org.id).map((j) => j.opts.priority ?? 0).sort((a, b) => a - b);

    await rows.put(QUEUE, { enabled: false, priority_step: 10 });
    expect(await waitFor(() => worker().isPaused(), 2000)).to.equal(true);
    const first = chat(org.key, 'p1');
    expect(await waitFor(async () => (await backlog(QUEUE)) === 1, 3000), 'first queued').to.equal(true);
    const second = chat(org.key, 'p2');
    expect(await waitFor(async () => (await backlog(QUEUE)) === 2, 3000), 'second queued').to.equal(true);
    // the org held 0 then 1 jobs in the lane: priorities 1 + 0*10 and 1 + 1*10
    expect(await priorities()).to.deep.equal([1, 11]);

    await rows.put(QUEUE, { priority_step: 0 });
    const third = chat(org.key, 'p3');
    expect(await waitFor(async () => (await backlog(QUEUE)) === 3, 3000), 'third queued').to.equal(true);
    expect(await priorities()).to.deep.equal([1, 1, 11]);

    await rows.put(QUEUE, { enabled: true });
    expect((await Promise.all([first, second, third])).map((r) => r.status)).to.deep.equal([200, 200, 200]);
  });

  it('picks up a row written without a broadcast through the slow poll (within 5 s)', async function () {
    this.timeout(15_000);
    // written straight to the table: no cache-epoch bump, so no message on the cache channel
    const epoch = await readEpoch(env().redis);
    expect(worker().concurrency).to.equal(config().chatBackgroundConcurrency);
    await SchedulerEndpoint.create({ queue: QUEUE, concurrency: 3, priorityStep: null, maxWaiting: null });
    expect(await waitFor(() => worker().concurrency === 3, 6000, 100), 'applied by the poll').to.equal(true);
    expect(await readEpoch(env().redis), 'nothing was broadcast').to.equal(epoch);
  });

  it('never resumes a worker that something else paused (a drain, an operator tool)', async () => {
    const w = worker();
    await w.pause(true);
    try {
      await pools().settings.refresh(); // the row says enabled (no row: the default)
      expect(w.isPaused(), 'still paused').to.equal(true);
    } finally {
      await w.resume();
    }
  });
});
