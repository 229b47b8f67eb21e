import crypto from 'crypto';
import { expect } from 'chai';
import type { ChildProcess } from 'child_process';
import { QueryTypes } from 'sequelize';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { waitFor } from '../../helpers/wait';
import { childChatWorkers } from '../../helpers/child-worker';
import { kill, spawnWeb } from '../../helpers/processes';
import { otlpReceiver } from '../../helpers/otlp-receiver';
import { usageSettled } from '../../helpers/usage';
import { db } from '../../../shared/db/sequelize';

const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');

/**
 * The spans of a request that ended badly after its answer began say what its request log row says:
 * a stream cut after its first chunk is a failed server span with the row's status and code (the wire
 * said 200), and a client that cancels mid-stream is a cancel on the server span and on the worker's
 * process span, not an upstream error.
 */
describe('tracing: the outcome of a stream cut or cancelled matches the request log', function () {
  this.timeout(90_000);
  let o: TestOrg;
  let receiver: Awaited<ReturnType<typeof otlpReceiver>>;
  let web: { child: ChildProcess; url: string };
  let workers: Awaited<ReturnType<typeof childChatWorkers>>;
  before(async () => {
    o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 16 } });
    receiver = await otlpReceiver();
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100' };
    web = await spawnWeb(otel);
    workers = await childChatWorkers(1, otel);
  });
  after(async () => {
    if (web) await kill(web.child);
    await workers?.restore();
    await receiver?.close();
  });
  afterEach(resetSim);

  const spansOf = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId);
  const spanNamed = async (traceId: string, name: string) => {
    expect(await waitFor(() => spansOf(traceId).some((s) => s.name === name), 20_000, 50), `span ${name}`).to.equal(true);
    return spansOf(traceId).find((s) => s.name === name)!;
  };
  const row = async (rid: string) => {
    await usageSettled();
    return (await db().query<Record<string, unknown>>('SELECT status, error_code FROM request_logs WHERE request_id = :rid', { type: QueryTypes.SELECT, replacements: { rid } }))[0];
  };
  const stream = (traceId: string, signal?: AbortSignal) => fetch(`${web.url}/v1/chat/completions`, {
    method: 'POST', signal,
    headers: { authorization: `Bearer ${o.key}`, 'content-type': 'application/json', traceparent: `00-${traceId}-${hex(8)}-01` },
    body: JSON.stringify({ model: 'sim-chat', stream: true, messages: [{ role: 'user', content: 'x' }] }),
  });

  it('a stream cut after its first chunk: the server span fails with the row\'s status and code', async () => {
    env().sim.knobs.set('sim-chat-1', { dropAfterChunks: 3 });
    const traceId = hex(16);
    const res = await stream(traceId);
    expect(res.status).to.equal(200);
    await res.text();
    const server = await spanNamed(traceId, 'POST /v1/chat/completions');
    const r = await row(res.headers.get('x-service-request-id')!);
    expect(r.status).to.be.at.least(500);
    expect(server.attributes['http.response.status_code']).to.equal(r.status);
    expect(server.statusCode, 'error status').to.equal(2);
    expect(server.attributes['error.type']).to.equal(r.error_code);
  });

  it('a client that cancels mid-stream: a cancel on the server span and on the worker\'s process span', async () => {
    env().sim.knobs.set('sim-chat-1', { tokenDelayMs: 100, outputWords: 40 });
    const traceId = hex(16);
    const ac = new AbortController();
    const res = await stream(traceId, ac.signal);
    const reader = res.body!.getReader();
    await reader.read();
    await reader.read();
    ac.abort();
    const job = await spanNamed(traceId, 'process chat-interactive');
    expect(job.attributes['error.type']).to.equal('client_closed_request');
    const server = await spanNamed(traceId, 'POST /v1/chat/completions');
    expect(server.attributes['http.response.status_code']).to.equal(499);
    expect(await row(res.headers.get('x-service-request-id')!)).to.deep.equal({ status: 499, error_code: 'client_closed_request' });
  });
});
