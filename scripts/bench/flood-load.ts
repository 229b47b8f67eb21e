import { runLoad, pct } from './load';

/**
 * The flooding organization of the bench's `flood` cell (flood.ts), in a process of its own so its
 * load does not share an event loop with the quiet organization's measurement.
 *   node flood-load.js <url> <api key> <body JSON> <concurrency> <seconds>
 * Prints one line of JSON: requests answered within the measured seconds, errors, seconds, and the client times (ms) of the requests.
 */
async function main(): Promise<void> {
  const [url, key, body, concurrency, seconds] = process.argv.slice(2);
  const r = await runLoad(url, { 'SERVICE-API-KEY': key }, JSON.parse(body) as object, Number(concurrency), Number(seconds), 0);
  process.stdout.write(`${JSON.stringify({ completed: r.answeredInWindow, errors: r.errors, seconds: r.seconds, totals: r.samples.map((x) => Math.round(x.total * 100) / 100) })}\n`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
