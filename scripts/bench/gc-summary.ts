import fs from 'fs';

/**
 * What V8's collector did in one process, from its `--trace-gc-nvp` log (gc-log.ts): scavenges (young
 * generation) and full collections, their pauses, and what each scavenge copied (`survived`: kept in
 * the young generation) and promoted (moved to the old generation). Requests that ended before a
 * scavenge should be neither; a scavenge that promotes most of what survived the one before is
 * copying state that outlived its request (shared/in-flight-map.ts tells one cause).
 */
export interface GcSummary {
  scavenges: number;
  scavengePauseMs: number;
  fullCollections: number;
  fullPauseMs: number;
  survivedBytes: number;
  promotedBytes: number;
}

export function readGcLog(file: string): GcSummary {
  return readGcLogText(fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');
}

/** The same, from the trace's text. */
export function readGcLogText(text: string): GcSummary {
  const s: GcSummary = { scavenges: 0, scavengePauseMs: 0, fullCollections: 0, fullPauseMs: 0, survivedBytes: 0, promotedBytes: 0 };
  for (const line of text.split('\n')) {
    const kind = / gc=(\S+)/.exec(line)?.[1];
    const num = (name: string) => Number(new RegExp(` ${name}=([\\d.]+)`).exec(line)?.[1] ?? 0);
    if (kind === 's') {
      s.scavenges++;
      s.scavengePauseMs += num('pause');
      s.survivedBytes += num('new_space_survived');
      s.promotedBytes += num('promoted');
    } else if (kind === 'mc' || kind === 'mmc') {
      s.fullCollections++;
      s.fullPauseMs += num('pause');
    }
  }
  return s;
}

/** One table row: per 1,000 requests served, and per scavenge. */
export function gcRow(role: string, s: GcSummary, requests: number): string[] {
  const per = (v: number) => (requests ? v / requests : 0);
  const perScavenge = (v: number) => (s.scavenges ? v / s.scavenges / 1024 : 0);
  return [
    role,
    String(requests),
    (1000 * per(s.scavenges)).toFixed(1),
    (s.scavenges ? s.scavengePauseMs / s.scavenges : 0).toFixed(1),
    perScavenge(s.survivedBytes).toFixed(0),
    perScavenge(s.promotedBytes).toFixed(0),
    String(s.fullCollections),
    (1000 * per(s.scavengePauseMs + s.fullPauseMs)).toFixed(0),
  ];
}

export const GC_HEAD = ['process', 'requests', 'scavenges per 1,000 req', 'scavenge pause ms', 'survived KB per scavenge', 'promoted KB per scavenge', 'full collections', 'GC pause µs per request'];
