import { expect } from 'chai';
import path from 'path';
import { spawn } from 'child_process';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { childChatWorkers } from '../../helpers/child-worker';
import { otlpReceiver } from '../../helpers/otlp-receiver';

interface ProbeOutput {
  status?: number;
  traceresponse?: string | null;
  loaded?: string[];
  body?: string;
  /** What the probe printed (its error log lines), for a failure's message. */
  log?: string;
  error?: string;
}

/** Runs test/helpers/tracing-probe.ts (a web pod and a chat worker serving one request) with `extraEnv`. */
function probe(key: string, extraEnv: Record<string, string | undefined>): Promise<ProbeOutput> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, PROBE_KEY: key, LOG_LEVEL: 'error', ...extraEnv };
  for (const [k, v] of Object.entries(childEnv)) if (v === undefined) delete childEnv[k];
  const child = spawn(process.execPath, [path.resolve(__dirname, '../../helpers/tracing-probe.js')], { env: childEnv, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += String(d)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`probe timed out: ${out}`));
    }, 40_000);
    child.on('exit', () => {
      clearTimeout(timer);
      const line = out.trim().split('\n').pop() ?? '';
      try {
        resolve({ ...(JSON.parse(line) as ProbeOutput), log: out.slice(0, 3000) });
      } catch {
        reject(new Error(`probe printed no result: ${out}`));
      }
    });
  });
}

/** An OpenTelemetry module other than the API package, which prom-client loads for its exemplars whatever we do. */
const sdkModules = (loaded: string[] = []) => loaded.filter((m) => !m.includes(`${path.sep}@opentelemetry${path.sep}api${path.sep}`));

describe('tracing off: nothing of the OpenTelemetry SDK is loaded', function () {
  this.timeout(120_000);
  let o: TestOrg;
  let restore: (() => Promise<void>) | undefined;

  before(async () => {
    o = await buildOrg(env().redis);
    // the probe's own worker must take its job: the in-process pools stop meanwhile
    restore = (await childChatWorkers(0)).restore;
  });
  after(async () => {
    await restore?.();
  });

  const unset = { OTEL_EXPORTER_OTLP_ENDPOINT: undefined, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined, OTEL_SDK_DISABLED: undefined };

  it('with no OTEL_* variable a web pod and a worker serve a chat request without loading any OpenTelemetry SDK module', async () => {
    const r = await probe(o.key, unset);
    expect(r.error).to.equal(undefined);
    expect(r.status, JSON.stringify(r)).to.equal(200);
    expect(r.traceresponse, 'no trace, no traceresponse header').to.equal(null);
    expect(sdkModules(r.loaded)).to.deep.equal([]);
  });

  it('OTEL_SDK_DISABLED=true wins over a configured endpoint; the same probe with tracing on does load the SDK', async () => {
    const receiver = await otlpReceiver();
    try {
      const off = await probe(o.key, { ...unset, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: 'true' });
      expect(off.status).to.equal(200);
      expect(sdkModules(off.loaded)).to.deep.equal([]);

      const on = await probe(o.key, { ...unset, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
      expect(on.status).to.equal(200);
      expect(on.traceresponse).to.match(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
      expect(sdkModules(on.loaded).some((m) => m.includes('sdk-trace-node')), 'the probe sees the SDK when it is loaded').to.equal(true);
    } finally {
      await receiver.close();
    }
  });
});
