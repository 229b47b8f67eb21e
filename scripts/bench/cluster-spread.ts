import type { Cluster } from 'ioredis';
import { cpuMsOfInfo } from './cpu';

/** Per master of a cluster: commands served (INFO commandstats, all commands) and CPU used (ms). */
export interface NodeReading {
  node: string;
  calls: number;
  cpuMs: number;
}

const callsOfInfo = (info: string) => [...info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);

export async function readNodes(cluster: Cluster): Promise<NodeReading[]> {
  return Promise.all(
    cluster.nodes('master').map(async (n) => ({
      node: `${n.options.host}:${n.options.port}`,
      calls: callsOfInfo(await n.info('commandstats')),
      cpuMs: cpuMsOfInfo(await n.info('cpu')),
    })),
  );
}

/** Rows `node, commands, share of commands, CPU ms, share of CPU` between two readings. */
export function spreadRows(before: NodeReading[], after: NodeReading[]): { rows: string[][]; maxShare: number } {
  const deltas = after.map((a) => {
    const b = before.find((x) => x.node === a.node) ?? { calls: 0, cpuMs: 0 };
    return { node: a.node, calls: a.calls - b.calls, cpuMs: a.cpuMs - b.cpuMs };
  });
  const calls = deltas.reduce((s, d) => s + d.calls, 0) || 1;
  const cpu = deltas.reduce((s, d) => s + d.cpuMs, 0) || 1;
  const rows = deltas.map((d) => [d.node, String(d.calls), `${((100 * d.calls) / calls).toFixed(1)} %`, d.cpuMs.toFixed(0), `${((100 * d.cpuMs) / cpu).toFixed(1)} %`]);
  return { rows, maxShare: Math.max(...deltas.map((d) => d.calls / calls)) };
}
