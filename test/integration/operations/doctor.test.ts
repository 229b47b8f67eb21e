import { expect } from 'chai';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { runToEnd } from '../../helpers/process';
import { startOwnRedis, type OwnRedis } from '../../helpers/own-redis';
import { deleteKeysByPrefix } from '../../../scripts/services/redis';
import { resetConfig } from '../../../shared/config/env';
import { keys } from '../../../shared/redis/keys';
import { Queues } from '../../../shared/queues/queues';
import { migrator } from '../../../shared/db/migrate';
import { scratchDatabase } from '../../helpers/scratch-db';

/** A key prefix of this file's own on the shared Redis, so the queues it looks at start empty. */
const prefix = `${process.env.REDIS_PREFIX}doc`;
const reportLines = (stdout: string) => stdout.split('\n').filter((l) => l.trim());

/**
 * The chat queue and the usage keys as the doctor process (REDIS_PREFIX=prefix) names them, built by
 * the project's own code. Synchronous, so nothing else in this process runs under the borrowed prefix.
 */
function underDoctorPrefix(redis: Redis): { queue: Queue; deadLetters: string; outbox: string } {
  const own = process.env.REDIS_PREFIX;
  process.env.REDIS_PREFIX = prefix;
  resetConfig();
  try {
    return { queue: new Queues(redis).get('chat-interactive') as unknown as Queue, deadLetters: keys.usageDeadLetters(), outbox: keys.usageOutbox() };
  } finally {
    process.env.REDIS_PREFIX = own;
    resetConfig();
  }
}

describe('operations: gateway doctor', function () {
  this.timeout(60_000);
  /**
   * The doctor's database: one of this file's own, migrated and empty. The run's shared database holds
   * what earlier tests of the shard left, e.g. the rollup test's usage events of 2025, which sit in the
   * DEFAULT partition (a warning on its own), so a "healthy install" there depended on the files' order.
   */
  const db = scratchDatabase('doctor');
  const doctor = (env: Record<string, string> = {}) => runToEnd('scripts/cli.js', ['doctor'], { REDIS_PREFIX: prefix, DATABASE_URL: db.url, ...env }, 30_000);
  before(() => migrator(db.sequelize()).up());
  beforeEach(() => deleteKeysByPrefix(process.env.REDIS_URL!, prefix));
  after(() => deleteKeysByPrefix(process.env.REDIS_URL!, prefix));

  it('on a healthy install every check passes', async () => {
    const r = await doctor();
    expect(r.code, r.stdout + r.stderr).to.equal(0);
    const lines = reportLines(r.stdout);
    expect(lines.at(-1)).to.match(/^doctor: all \d+ checks pass$/);
    const checks = lines.slice(0, -1);
    for (const name of ['redis', 'redis version', 'redis maxmemory-policy', 'redis persistence', 'postgres', 'postgres version', 'migrations', 'stalled jobs', 'failed jobs', 'usage dead letters', 'usage outbox']) {
      expect(checks.some((l) => new RegExp(`^ok\\s+${name}\\s{2}`).test(l)), `${name} in\n${r.stdout}`).to.equal(true);
    }
    expect(checks.every((l) => l.startsWith('ok'))).to.equal(true);
  });

  it('names stalled jobs, dead letters and an outbox nobody drains', async () => {
    const redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    const { queue, deadLetters, outbox } = underDoctorPrefix(redis);
    const worker = new Worker(queue.name, null, { connection: redis, prefix: queue.opts.prefix, autorun: false });
    try {
      await queue.add('chat', { probe: true });
      const job = await worker.getNextJob('doctor-test');
      expect(job).to.not.equal(undefined);
      await redis.del(queue.toKey(`${job!.id}:lock`)); // its worker "died": the lock is gone, the job still active
      await redis.xadd(deadLetters, '*', 'reason', 'test');
      await redis.xadd(outbox, `${Date.now() - 20 * 60_000}-0`, 'u', '{}');
      const r = await doctor();
      expect(r.code, r.stdout + r.stderr).to.equal(1);
      expect(r.stdout).to.match(/^WARN\s+stalled jobs\s+1 active job\(s\) have lost their worker \(chat-interactive: 1\)/m);
      expect(r.stdout).to.match(/^WARN\s+usage dead letters\s+1 usage event\(s\) Postgres refused sit in /m);
      expect(r.stdout).to.include(`sit in ${deadLetters}: read them with \`redis-cli XRANGE ${deadLetters} - +\``);
      expect(r.stdout).to.match(/^FAIL\s+usage outbox\s+1 entry, oldest 1[12]\d\ds: no worker process is draining usage into Postgres/m);
      expect(reportLines(r.stdout).at(-1)).to.match(/^doctor: \d+ ok, 2 warning\(s\), 1 failing$/);
    } finally {
      await worker.close();
      await queue.close();
      redis.disconnect();
    }
  });

  it('warns "could not verify" where CONFIG is refused (managed Redis), and passes the rest', async () => {
    const managed = await startOwnRedis(['--rename-command', 'CONFIG', '']);
    try {
      const r = await doctor({ REDIS_URL: managed.url, NODE_ENV: 'production' });
      expect(r.code, r.stdout + r.stderr).to.equal(0);
      expect(r.stdout).to.match(/^WARN\s+redis maxmemory-policy\s+could not verify maxmemory-policy \(CONFIG GET refused: .*\); make sure it is noeviction/m);
      expect(r.stdout).to.match(/^WARN\s+redis persistence\s+could not verify AOF/m);
      expect(r.stdout).to.match(/^ok\s+redis version\s+/m);
    } finally {
      await managed.stop();
    }
  });

  describe('on a Redis with maxmemory-policy allkeys-lru', () => {
    let lru: OwnRedis;
    before(async () => {
      lru = await startOwnRedis(['--maxmemory-policy', 'allkeys-lru']);
    });
    after(() => lru.stop());

    it('names the setting and the command that fixes it; failing in production', async () => {
      const fix = `redis-cli -h 127.0.0.1 -p ${lru.port} CONFIG SET maxmemory-policy noeviction`;
      const prod = await doctor({ REDIS_URL: lru.url, NODE_ENV: 'production' });
      expect(prod.code, prod.stdout + prod.stderr).to.equal(1);
      const line = reportLines(prod.stdout).find((l) => l.includes('redis maxmemory-policy'))!;
      expect(line).to.match(/^FAIL\s+redis maxmemory-policy\s+Redis maxmemory-policy is allkeys-lru: /);
      expect(line).to.include(`\`${fix}\``);
      expect(line).to.include('`maxmemory-policy noeviction` in redis.conf');
      expect(prod.stdout).to.match(/^WARN\s+redis persistence\s+WARNING Redis AOF is off: a Redis restart loses queued jobs and the usage events not yet written to Postgres/m);

      const dev = await doctor({ REDIS_URL: lru.url, NODE_ENV: 'development' });
      expect(dev.code, dev.stdout + dev.stderr).to.equal(0);
      expect(dev.stdout).to.match(/^WARN\s+redis maxmemory-policy\s+Redis maxmemory-policy is allkeys-lru: .*refused when NODE_ENV=production/m);
      expect(dev.stdout).to.include(fix);
    });
  });
});
