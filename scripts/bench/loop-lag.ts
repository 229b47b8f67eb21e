import { monitorEventLoopDelay } from 'perf_hooks';

/**
 * A preload for the bench's processes (`BENCH_NODE_ARGS="--require dist/scripts/bench/loop-lag.js"`):
 * prints the process's event loop delay (p50, p99, max in ms) every LOOP_LAG_MS (default 2,000) to
 * stderr, with its pid and command, to tell a request waiting for the loop from one waiting elsewhere.
 */
const every = Number(process.env.LOOP_LAG_MS ?? 2000);
const h = monitorEventLoopDelay({ resolution: 5 });
h.enable();
const who = `${process.pid} ${process.argv.slice(1).map((a) => a.split('/').pop()).join(' ')}`;
setInterval(() => {
  const ms = (ns: number) => (ns / 1e6).toFixed(1);
  process.stderr.write(`loop-lag ${who}: p50 ${ms(h.percentile(50))} p99 ${ms(h.percentile(99))} max ${ms(h.max)} ms\n`);
  h.reset();
}, every).unref();
