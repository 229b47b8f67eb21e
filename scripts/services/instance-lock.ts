import fs from 'fs';
import path from 'path';
import { StartupError } from '../../shared/startup/startup-error';

/** What `.data/gateway.pid` says about the instance that owns the data folder. */
export interface InstanceInfo {
  pid: number;
  url?: string;
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

export function readInstance(file: string): InstanceInfo | undefined {
  try {
    const info = JSON.parse(fs.readFileSync(file, 'utf8')) as InstanceInfo;
    return Number.isInteger(info.pid) && info.pid > 0 ? info : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One `npm start` per data folder: a second one would share the first one's Redis and Postgres and
 * re-point its catalog at another simulator port. The file is created exclusively; one left by an
 * instance that is gone (its pid is not alive) is taken over.
 */
export function acquireInstanceLock(dataRoot: string): InstanceLock {
  const file = path.join(dataRoot, 'gateway.pid');
  fs.mkdirSync(dataRoot, { recursive: true });
  const write = (info: InstanceInfo, flag: 'wx' | 'w') => fs.writeFileSync(file, JSON.stringify(info), { flag, mode: 0o600 });
  for (let attempt = 0; ; attempt++) {
    try {
      write({ pid: process.pid }, 'wx');
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
      const other = readInstance(file);
      if (other && other.pid !== process.pid && alive(other.pid)) {
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
      if (ours()) write({ pid: process.pid, url }, 'w');
    },
    release: () => {
      if (ours()) fs.rmSync(file, { force: true });
    },
  };
}
