import { spawn, type ChildProcess } from 'child_process';
import path from 'path';
import { freePort } from '../../scripts/services/free-port';
import { waitFor } from '../helpers/wait';

/** A gateway process of the cluster suite: a web pod or a chat worker, started from dist/. */
export interface GatewayProcess {
  name: string;
  child: ChildProcess;
  /** Web pods: their base URL. */
  url?: string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

function launch(name: string, script: string, args: string[], extraEnv: Record<string, string>, ready: string): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [path.resolve(__dirname, '../..', script), ...args], {
    env: { ...process.env, ...extraEnv, POD_ID: name, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (d) => {
    if (out.length < 100_000) out += String(d);
  });
  const stop = (signal: NodeJS.Signals = 'SIGTERM') =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    });
  return waitFor(() => out.includes(ready) || child.exitCode !== null, 20_000).then((ok) => {
    if (!ok || child.exitCode !== null) throw new Error(`${name} did not start: ${out.slice(-2000)}`);
    return { name, child, stop };
  });
}

export async function startWebPod(name: string): Promise<GatewayProcess> {
  const port = await freePort();
  const p = await launch(name, 'api/server.js', [], { PORT: String(port) }, 'web listening');
  return { ...p, url: `http://127.0.0.1:${port}` };
}

export function startChatWorker(name: string): Promise<GatewayProcess> {
  return startWorker(name, ['chat']);
}

/** A worker process running the given pools (`workers/main.js <pool>...`). */
export function startWorker(name: string, pools: string[]): Promise<GatewayProcess> {
  return launch(name, 'workers/main.js', pools, {}, 'workers started');
}
