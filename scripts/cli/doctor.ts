import type { Command } from 'commander';
import { config } from '../../shared/config/env';
import { closeDb } from '../../shared/db/sequelize';
import { createRedis } from '../../shared/redis/connection';
import type { Check } from '../../shared/preflight/check';

const MARK: Record<Check['status'], string> = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' };

/** The report: one line a check, then a count; exit 1 when a check failed. */
export function formatReport(checks: Check[]): string {
  const width = Math.max(...checks.map((c) => c.name.length));
  const lines = checks.map((c) => `${MARK[c.status]}  ${c.name.padEnd(width)}  ${c.detail}`);
  const count = (s: Check['status']) => checks.filter((c) => c.status === s).length;
  const summary = count('fail') || count('warn') ? `doctor: ${count('ok')} ok, ${count('warn')} warning(s), ${count('fail')} failing` : `doctor: all ${checks.length} checks pass`;
  return [...lines, summary].join('\n');
}

/** `gateway doctor`: the start-up preflight on demand, plus queue health. */
export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description("Check Redis, Postgres, migrations and the queues as every process does at start, and report")
    .option('--json', 'print the checks as JSON')
    .action(async (opts: { json?: boolean }) => {
      // loaded by this command only (BullMQ, the migrations' list): every other command starts faster
      const { preflight } = require('../../shared/preflight') as typeof import('../../shared/preflight');
      const { checkQueues } = require('../../shared/preflight/queue-health') as typeof import('../../shared/preflight/queue-health');
      const cfg = config();
      const checks = await preflight(cfg);
      if (!checks.some((c) => c.status === 'fail' && /postgres|migrations/.test(c.name))) {
        const { checkDefaultPartitions } = require('../../shared/db/partitions') as typeof import('../../shared/db/partitions');
        checks.push(...(await checkDefaultPartitions()));
      }
      if (!checks.some((c) => c.name === 'redis' && c.status === 'fail')) {
        const redis = createRedis('command');
        try {
          checks.push(...(await checkQueues(redis)));
        } finally {
          redis.disconnect();
        }
      }
      await closeDb();
      process.stdout.write(`${opts.json ? JSON.stringify({ checks }, null, 2) : formatReport(checks)}\n`);
      process.exitCode = checks.some((c) => c.status === 'fail') ? 1 : 0;
    });
}
