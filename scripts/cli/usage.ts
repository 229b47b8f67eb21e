import type { Command } from 'commander';
import { addDays, rollupDay, utcDay } from '../../shared/metering/rollups';
import { fail, withServices } from './with-services';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const MAX_DAYS = 3660;

/** `gateway usage rollup --from <day> [--to <day>]`: recompute the daily rollups of past days (backfill). */
export function registerUsage(program: Command): void {
  const usage = program.command('usage').description('usage ledger maintenance');
  usage
    .command('rollup')
    .description('recompute the daily usage rollups of UTC days from --from to --to (inclusive; default today)')
    .requiredOption('--from <day>', 'first UTC day, YYYY-MM-DD')
    .option('--to <day>', 'last UTC day, YYYY-MM-DD')
    .action((opts: { from: string; to?: string }) =>
      withServices(async () => {
        const to = opts.to ?? utcDay(new Date());
        for (const d of [opts.from, to]) if (!DAY.test(d) || utcDay(new Date(`${d}T00:00:00Z`)) !== d) fail(`'${d}' is not a day (YYYY-MM-DD)`);
        if (opts.from > to) fail('--from is after --to');
        const n = Math.round((Date.parse(to) - Date.parse(opts.from)) / 86_400_000) + 1;
        if (n > MAX_DAYS) fail(`at most ${MAX_DAYS} days at once`);
        for (let day = opts.from; day <= to; day = addDays(day, 1)) await rollupDay(day);
        console.log(`rolled up ${n} day(s) from ${opts.from} to ${to}`);
      }),
    );
}
