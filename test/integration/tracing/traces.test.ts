import { expect } from 'chai';
import crypto from 'crypto';
import fs from 'fs';
import path from 'path';
import OpenAI from 'openai';
import type { ChildProcess } from 'child_process';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { waitFor } from '../../helpers/wait';
import { childChatWorkers } from '../../helpers/child-worker';
import { kill, spawnWeb } from '../../helpers/processes';
import { otlpReceiver, type ReceivedSpan } from '../../helpers/otlp-receiver';
import { poolModel, simDeployment } from '../../helpers/pool-models';
import { QueryTypes } from 'sequelize';
import { db } from '../../../shared/db/sequelize';

const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');

/** Keeps a trace in .data/traces/<name>.json for scripts/tracing/waterfall.ts (the picture in docs/observability.md). */
function keep(name: string, traceId: string, spans: ReceivedSpan[]): void {
  const dir = path.resolve(__dirname, '../../../../.data/traces');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${name}.json`), JSON.stringify({ traceId, spans }, null, 1));
}

/**
 * OpenTelemetry across the queue hop, through the real parts: a web process and a chat worker process
 * started with the standard OTEL_* variables, exporting OTLP/HTTP JSON to a receiver of the test's own.
 */
describe('tracing: one trace per request across the web pod, the queue and the worker', function () {
  this.timeout(90_000);
  let o: TestOrg;
  let receiver: Awaited<ReturnType<typeof otlpReceiver>>;
  let web: { child: ChildProcess; url: string };
  let workers: Awaited<ReturnType<typeof childChatWorkers>>;

  before(async () => {
    o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 16 } });
    receiver = await otlpReceiver();
    const otel = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100', // export within 100 ms rather than 5 s
    };
    web = await spawnWeb(otel);
    workers = await childChatWorkers(1, otel);
  });
  after(async () => {
    if (web) await kill(web.child);
    await workers?.restore();
    await receiver?.close();
  });
  afterEach(resetSim);

  const client = (traceparent: string) => new OpenAI({ apiKey: o.key, baseURL: `${web.url}/v1`, maxRetries: 0, defaultHeaders: { traceparent } });
  const spansOf = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId);
  const named = (spans: ReceivedSpan[], name: string) => {
    const s = spans.find((x) => x.name === name);
    expect(s, `span '${name}' among ${spans.map((x) => `${x.service}:${x.name}`).join(', ')}`).to.not.equal(undefined);
    return s!;
  };

  it("continues the caller's traceparent: spans from the web process and the worker process under the caller's trace id", async () => {
    const traceId = hex(16);
    const callerSpan = hex(8);
    const { data: reply, response } = await client(`00-${traceId}-${callerSpan}-01`)
      .chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'trace me' }] })
      .withResponse();
    expect(reply.choices[0].message.content).to.be.a('string');
    // the answer names the gateway's span in the caller's trace
    expect(response.headers.get('traceresponse')).to.match(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

    // the usage write is the last span of the request (the drainer, after the reply)
    const complete = () => ['usage write', 'answer', 'process chat-interactive', 'reply'].every((n) => spansOf(traceId).some((s) => s.name === n));
    expect(await waitFor(complete, 20_000, 50), 'the spans of both processes arrived').to.equal(true);
    const spans = spansOf(traceId);

    const root = named(spans, 'POST /v1/chat/completions');
    expect(root.service).to.equal('gateway-web');
    expect(root.parentSpanId, "the server span is the caller's span's child").to.equal(callerSpan);
    expect(root.kind).to.equal(2); // SERVER
    expect(root.attributes['http.response.status_code']).to.equal(200);
    expect(root.attributes['gateway.request_id']).to.equal(response.headers.get('x-service-request-id'));
    expect(response.headers.get('traceresponse')).to.include(`-${root.spanId}-`);
    for (const step of ['authenticate', 'validate', 'admit', 'send chat-interactive', 'wait', 'answer']) {
      const s = named(spans, step);
      expect(s.service, step).to.equal('gateway-web');
      expect(s.parentSpanId, `${step} hangs under the request span`).to.equal(root.spanId);
    }
    const send = named(spans, 'send chat-interactive');
    expect(send.kind).to.equal(4); // PRODUCER
    expect(named(spans, 'admit').attributes['gateway.lane']).to.equal('interactive');

    // the worker continues the trace from the job data: the queue wait and the job under the send span
    const queued = named(spans, 'queue chat-interactive');
    const job = named(spans, 'process chat-interactive');
    for (const s of [queued, job]) {
      expect(s.service).to.equal('gateway-worker');
      expect(s.parentSpanId).to.equal(send.spanId);
    }
    expect(job.kind).to.equal(5); // CONSUMER
    expect(queued.attributes['gateway.queue.wait_ms']).to.be.a('number').and.at.least(0);
    expect(job.attributes['messaging.destination.name']).to.equal('chat-interactive');
    expect(job.attributes['gen_ai.request.model']).to.equal('sim-chat');
    expect(job.attributes['gen_ai.operation.name']).to.equal('chat');
    expect(job.attributes['gen_ai.usage.input_tokens']).to.equal(reply.usage!.prompt_tokens);
    expect(job.attributes['gen_ai.usage.output_tokens']).to.equal(reply.usage!.completion_tokens);

    const attempts = spans.filter((s) => s.parentSpanId === job.spanId && s.kind === 3); // CLIENT
    expect(attempts).to.have.length(1);
    const attempt = attempts[0];
    expect(attempt.name).to.match(/^chat /);
    expect(attempt.attributes['gen_ai.provider.name']).to.equal('openai');
    expect(attempt.attributes['gen_ai.operation.name']).to.equal('chat');
    expect(attempt.attributes['server.address']).to.equal('127.0.0.1');
    expect(attempt.attributes['gateway.deployment']).to.equal(response.headers.get('x-service-deployment'));
    expect(attempt.attributes['gateway.attempt']).to.equal(1);
    expect(attempt.statusCode).to.not.equal(2);

    const reply_ = named(spans, 'reply');
    expect(reply_.parentSpanId).to.equal(job.spanId);
    const write = named(spans, 'usage write');
    expect(write.service).to.equal('gateway-worker');
    expect(write.parentSpanId, 'the drainer continues the trace from the outbox record').to.equal(reply_.spanId);
    expect(write.attributes['db.collection.name']).to.equal('usage_events');

    // one trace: every span's parent is in it, but for the caller's own span
    const ids = new Set(spans.map((s) => s.spanId));
    for (const s of spans) if (s !== root) expect(ids.has(s.parentSpanId), `${s.name}'s parent is in the trace`).to.equal(true);
    keep('chat-trace', traceId, spans);

    // the request log row names the trace (the worker reads it from the carried traceparent)
    const requestId = response.headers.get('x-service-request-id');
    const logged = async () => (await db().query<{ trace_id: string | null }>('SELECT trace_id FROM request_logs WHERE request_id = :requestId', { type: QueryTypes.SELECT, replacements: { requestId } }))[0];
    expect(await waitFor(async () => (await logged()) !== undefined, 10_000), 'the log row was written').to.equal(true);
    expect((await logged())!.trace_id).to.equal(traceId);
  });

  it("a refused request's log row (written by the pod) names the caller's trace too", async () => {
    const traceId = hex(16);
    const err = await client(`00-${traceId}-${hex(8)}-01`).chat.completions.create({ model: 'sim-chat', messages: [], max_tokens: -1 } as never).then(() => undefined, (e: unknown) => e as { status: number; headers: Headers });
    expect(err, 'refused').to.not.equal(undefined);
    if (!err) return;
    expect(err.status).to.equal(400);
    const requestId = err.headers.get('x-service-request-id');
    const logged = async () => (await db().query<{ trace_id: string | null; status: number }>('SELECT trace_id, status FROM request_logs WHERE request_id = :requestId', { type: QueryTypes.SELECT, replacements: { requestId } }))[0];
    expect(await waitFor(async () => (await logged()) !== undefined, 10_000), 'the log row was written').to.equal(true);
    expect(await logged()).to.deep.include({ trace_id: traceId, status: 400 });
  });

  it('a streamed request: the wait span marks the first chunk (time to first byte), and the trace spans both processes', async () => {
    const traceId = hex(16);
    const stream = await client(`00-${traceId}-${hex(8)}-01`).chat.completions.create({ model: 'sim-chat', stream: true, messages: [{ role: 'user', content: 'stream me' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text.length).to.be.greaterThan(0);
    const complete = () => ['wait', 'process chat-interactive', 'POST /v1/chat/completions'].every((n) => spansOf(traceId).some((s) => s.name === n));
    expect(await waitFor(complete, 20_000, 50), 'the spans of both processes arrived').to.equal(true);
    const wait = named(spansOf(traceId), 'wait');
    expect(wait.events).to.deep.equal(['first chunk']);
    expect(named(spansOf(traceId), 'process chat-interactive').service).to.equal('gateway-worker');
  });

  it('a failed upstream attempt is a span with error status, the retry that served a span of its own', async () => {
    const broken = simDeployment('broken', { priority: 0 });
    const spare = simDeployment('spare', { priority: 1 });
    const model = await poolModel([broken, spare]);
    env().sim.knobs.set(broken.upstream, { status: 500 });
    const traceId = hex(16);
    const { response } = await client(`00-${traceId}-${hex(8)}-01`)
      .chat.completions.create({ model, messages: [{ role: 'user', content: 'fail once' }] })
      .withResponse();
    expect(response.headers.get('x-service-deployment')).to.equal('spare');
    expect(response.headers.get('x-service-attempts')).to.equal('2');
    // each process exports a span when it ends, in batches: wait for the last ones of both processes
    const complete = () => ['process chat-interactive', 'usage write', 'answer'].every((n) => spansOf(traceId).some((s) => s.name === n));
    expect(await waitFor(complete, 20_000, 50), 'the spans of both processes arrived').to.equal(true);
    const job = named(spansOf(traceId), 'process chat-interactive');
    const attempts = spansOf(traceId)
      .filter((s) => s.parentSpanId === job.spanId && s.kind === 3)
      .sort((a, b) => Number(a.attributes['gateway.attempt']) - Number(b.attributes['gateway.attempt']));
    expect(attempts.map((a) => a.attributes['gateway.deployment'])).to.deep.equal(['broken', 'spare']);
    expect(attempts[0].statusCode, 'the failed attempt').to.equal(2);
    expect(attempts[0].attributes['error.type']).to.equal('status_5xx');
    expect(attempts[0].attributes['gen_ai.request.model']).to.equal(broken.upstream);
    expect(attempts[1].statusCode, 'the attempt that served').to.not.equal(2);
    expect(job.statusCode).to.not.equal(2);
    keep('failover-trace', traceId, spansOf(traceId));
  });

  it('a request the worker fails: error status on its job and wait spans, the status on the server span', async () => {
    const only = simDeployment('only');
    const model = await poolModel([only]);
    env().sim.knobs.set(only.upstream, { status: 400 }); // not retryable: the job fails
    const traceId = hex(16);
    const err = await client(`00-${traceId}-${hex(8)}-01`)
      .chat.completions.create({ model, messages: [{ role: 'user', content: 'refused' }] })
      .then(() => undefined, (e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(err, 'the request failed').to.be.instanceOf(OpenAI.APIError);
    expect(await waitFor(() => ['POST /v1/chat/completions', 'process chat-interactive', 'wait'].every((n) => spansOf(traceId).some((s) => s.name === n)), 20_000, 50)).to.equal(true);
    const spans = spansOf(traceId);
    const job = named(spans, 'process chat-interactive');
    const code = (err!.error as { code?: string } | undefined)?.code;
    expect(job.statusCode).to.equal(2);
    expect(job.attributes['error.type']).to.equal(code);
    const wait = named(spans, 'wait');
    expect(wait.statusCode).to.equal(2);
    expect(wait.attributes['error.type']).to.equal(code);
    expect(named(spans, 'POST /v1/chat/completions').attributes['http.response.status_code']).to.equal(err!.status);
    expect(spans.some((s) => s.name === 'usage write'), 'nothing billed, so no usage write').to.equal(false);
  });

  it('a malformed traceparent is ignored: the request is served in a new trace of its own', async () => {
    for (const bad of ['00-not-a-trace-01', `00-${'0'.repeat(32)}-${hex(8)}-01`, `ff-${hex(16)}-${hex(8)}-01`]) {
      const { data, response } = await client(bad).chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'bad parent' }] }).withResponse();
      expect(data.choices[0].message.content, bad).to.be.a('string');
      const own = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(response.headers.get('traceresponse') ?? '');
      expect(own, `traceresponse for ${bad}`).to.not.equal(null);
      expect(bad).to.not.include(own![1]);
      const arrived = () => ['process chat-interactive', 'POST /v1/chat/completions'].every((n) => spansOf(own![1]).some((s) => s.name === n));
      expect(await waitFor(arrived, 20_000, 50), 'the worker continued the new trace').to.equal(true);
      const root = named(spansOf(own![1]), 'POST /v1/chat/completions');
      expect(root.parentSpanId, 'a root span: no parent from the malformed header').to.equal('');
    }
  });
});
