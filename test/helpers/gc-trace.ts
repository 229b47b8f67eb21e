import { execFileSync } from 'child_process';
import { readGcLogText } from '../../scripts/bench/gc-summary';

/**
 * Runs `script` in a child node process under V8's `--trace-gc-nvp` (with `nodeArgs` too) and returns
 * what its scavenges promoted, from V8's own trace (the bench's parser, scripts/bench/gc-summary.ts).
 */
export function promotedByScript(script: string, nodeArgs: string[] = []): { scavenges: number; promotedKbPerScavenge: number } {
  const out = execFileSync(process.execPath, ['--trace-gc-nvp', ...nodeArgs, '-e', script], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const s = readGcLogText(out);
  return { scavenges: s.scavenges, promotedKbPerScavenge: s.scavenges ? s.promotedBytes / s.scavenges / 1024 : 0 };
}
