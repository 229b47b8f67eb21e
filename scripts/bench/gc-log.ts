import fs from 'fs';

/**
 * A preload for the bench's processes under BENCH_GC_DIR (chat.bench.ts): V8's `--trace-gc-nvp` writes
 * one line per collection to the process's stdout, which the bench discards; this sends stdout to
 * BENCH_GC_LOG instead (the lowest free descriptor is 1 once it is closed), for gc-summary.ts to read.
 */
const file = process.env.BENCH_GC_LOG;
if (file) {
  fs.closeSync(1);
  fs.openSync(file, 'w');
}
