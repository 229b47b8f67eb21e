import fs from 'fs';
import path from 'path';
import { StartupError } from '../../shared/startup/startup-error';

/** What `.data/gateway.pid` says about the instance that owns the data folder. */
export interface InstanceInfo {
  pid: number;
  url?: string;
  /** The script it runs (process.argv[1]): a reused pid running something else is not it. */
  script?: string;
}

export interface InstanceLock {
  /** Records the instance's URL once its ports are chosen. */
  announce(url: string): void;
  release(): void;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // alive, owned by another user
  }
}

/** The pid is alive and, where /proc tells (Linux), still runs the same script. */
function stillRunning(info: InstanceInfo): boolean {
  if (!alive(info.pid)) return false;
  try {
    const cmdline = fs.readFileSync(`/proc/${info.pid}/cmdline`, 'utf8');
    return !info.script || cmdline.includes(info.script);
  } catch {
    return true; // no /proc: the pid's liveness is all there is to go on
  }
}

export function readInstance(file: string): InstanceInfo | undefined {
  try {
    const info = JSON.parse(fs.readFileSync(file, 'utf8')) as InstanceInfo;
    return Number.isInteger(info.pid) && info.pid > 0 ? info : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the file whole: a temporary file, then linked (create, fails when it exists) or renamed (replace). */
function writeWhole(file: string, info: InstanceInfo, how: 'create' | 'replace'): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(info), { mode: 0o600 });
  try {
    if (how === 'create') fs.linkSync(tmp, file);
    else fs.renameSync(tmp, file);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/**
 * One `npm start` per data folder: a second one would share the first one's Redis and Postgres and
 * re-point its catalog at another simulator port. The file appears whole and only once (link); one
 * left by an instance that is gone (its pid dead, or running something else) is taken over.
 */
export function acquireInstanceLock(dataRoot: string): InstanceLock {
  const file = path.join(dataRoot, 'gateway.pid');
  const me: InstanceInfo = { pid: process.pid, script: process.argv[1] };
  fs.mkdirSync(dataRoot, { recursive: true });
  for (let attempt = 0; ; attempt++) {
    try {
      writeWhole(file, me, 'create');
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
      const other = readInstance(file);
      if (other && other.pid !== process.pid && stillRunning(other)) {
        throw new StartupError(
          `another gateway is running on ${dataRoot} (pid ${other.pid}, ${other.url ?? 'still starting'}): use it, or stop it (Ctrl-C in its terminal, or kill ${other.pid}) before starting again`,
        );
      }
      fs.rmSync(file, { force: true }); // left by an instance that is gone
    }
  }
  const ours = () => readInstance(file)?.pid === process.pid;
  return {
    announce: (url) => {
      if (ours()) writeWhole(file, { ...me, url }, 'replace');
    },
    release: () => {
      if (ours()) fs.rmSync(file, { force: true });
    },
  };
}
