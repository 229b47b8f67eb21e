/**
 * `npm run bench:tracing`: the CPU the gateway's own spans cost per request, measured in one process
 * so that a busy machine's noise (which swamps it in `npm run bench`) stays out: the spans one chat
 * request makes (web steps, send, queue, process, one attempt, reply, usage write, built by the same
 * functions the gateway calls) are created, given their attributes, ended and exported (OTLP/HTTP
 * protobuf to a discarding sink, batch processor as configured by OTEL_BSP_*), for tracing off, on with
 * every request sampled, and on at 1 %. Prints CPU µs per request (user + system of this process).
 */
import { spawn } from 'child_process';
import type { Job } from 'bullmq';
import { startOtlpSink, tracingEnv } from './otlp-sink';

const REQUESTS = Number(process.env.BENCH_TRACING_REQUESTS ?? 20_000);

async function one(): Promise<void> {
  const { startTracing, stopTracing, span, childSpan } = await import('../../shared/tracing/trace.js');
  const { RequestTrace } = await import('../../api/middleware/trace-request.js');
  const { jobSpan, traceUsage, usageWriteSpans } = await import('../../shared/tracing/job-spans.js');
  const { attemptSpan, attemptServed } = await import('../../workers/routing/attempt-span.js');
  const { jobUsage } = await import('../../shared/metering/usage.js');
  startTracing('bench');
  const deployment = { providerId: 'p', kind: 'openai' as const, baseUrl: 'http://127.0.0.1:8090/v1', upstreamModel: 'sim-chat-1', name: 'a', weight: 1, priority: 0, rpm: null, tpm: null, maxConcurrency: null };
  const step = { poolId: 'm', model: 'sim-chat', fallback: false, deployments: [deployment] };
  const request = () => {
    // the web pod
    // no caller traceparent: the sampler decides (a caller's sampled flag would be followed)
    const root = span('POST', undefined, { kind: 'server', attributes: { 'http.request.method': 'POST', 'url.path': '/v1/chat/completions' } });
    const t = new RequestTrace(root);
    t.begin('authenticate');
    t.begin('validate');
    t.endStep();
    const admit = childSpan('admit', root, { attributes: { 'gateway.pool': 'chat', 'gateway.lane': 'interactive' } });
    admit.end();
    const send = childSpan('send chat-interactive', root, { kind: 'producer' });
    const data = { requestId: 'req_1', replyTo: 'r', deadline: Date.now() + 60_000, orgId: 'o', projectId: null, apiKeyId: 'k', publicModel: 'sim-chat', lane: 'interactive', stream: false, operation: 'chat', trace: send.carrier() };
    send.end();
    const wait = childSpan('wait', root);
    // the worker
    const now = Date.now();
    const job = jobSpan('chat-interactive', { data, id: 'req_1', timestamp: now - 1, processedOn: now } as unknown as Job<typeof data>, now);
    const attempt = attemptSpan(job, data as never, step, deployment, 1);
    attemptServed(attempt, { usage: { inputTokens: 12, outputTokens: 30 } });
    const reply = childSpan('reply', job);
    const usage = jobUsage(data, 'chat', { inputTokens: 12, outputTokens: 30, deployment: 'a' });
    traceUsage(usage, job, reply, undefined);
    reply.end();
    job.end();
    for (const s of usageWriteSpans([usage], Date.now()) ?? []) s.end();
    // back on the pod
    wait.end();
    t.begin('answer');
    t.endStep();
    root.end();
  };
  for (let i = 0; i < 2000; i++) request(); // warm-up
  const before = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++) {
    request();
    if (i % 20 === 19) await new Promise((r) => setTimeout(r, 5)); // let the batch processor's exports complete
  }
  await stopTracing(); // flushes what is buffered: export counted
  const used = process.cpuUsage(before);
  process.stdout.write(`${((used.user + used.system) / REQUESTS).toFixed(1)}\n`);
}

async function main(): Promise<void> {
  const sink = await startOtlpSink();
  const rows: string[] = [];
  for (const [label, env] of [['off', {}], ['on, 100 %', tracingEnv(sink.url, '1')], ['on, 1 %', tracingEnv(sink.url, '0.01')]] as const) {
    // each setting in a process of its own: the SDK is loaded once per process
    const out = await new Promise<string>((resolve) => {
      // a queue that holds every span: none is dropped unexported, so the export's cost is all counted
      const child = spawn(process.execPath, [__filename, '--one'], { env: { ...process.env, OTEL_BSP_MAX_QUEUE_SIZE: String(REQUESTS * 16), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (d) => (text += String(d)));
      child.stderr.on('data', (d) => (text += String(d)));
      child.on('exit', () => resolve(text.trim().split('\n').pop() ?? ''));
    });
    rows.push(`| ${label} | ${out} |`);
  }
  await sink.close();
  console.log(`${REQUESTS} requests' spans per setting; the sink received ${sink.stats.posts} exports, ${(sink.stats.bytes / 1e6).toFixed(1)} MB\n`);
  console.log('| tracing | CPU µs per request |\n|---|---|');
  rows.forEach((r) => console.log(r));
}

if (process.argv[2] === '--one') {
  one().catch((err) => {
    console.error(String(err));
    process.exit(1);
  });
} else {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
