import fs from 'fs';
import path from 'path';

/**
 * The node flags the Procfile gives a process type (`web: node --flag dist/api/server.js` gives
 * `['--flag']`), so that the benches run each process the way a deployment does.
 */
export function procfileNodeArgs(processType: string, root = path.resolve(__dirname, '..', '..', '..')): string[] {
  const line = fs
    .readFileSync(path.join(root, 'Procfile'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${processType}:`));
  if (!line) throw new Error(`no '${processType}' process in the Procfile`);
  const words = line.slice(processType.length + 1).trim().split(/\s+/);
  if (words[0] !== 'node') throw new Error(`the Procfile's '${processType}' does not start with node`);
  return words.slice(1).filter((w) => w.startsWith('--'));
}
