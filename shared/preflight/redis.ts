import { Redis } from 'ioredis';
import { explainRedis, where } from '../startup/explain';
import { fail, ok, SUPPORTED, versionStatus, warn, type Check } from './check';

/** Opens one connection that tries once and fails fast, for the checks (not for serving). */
export async function probeRedis(url: string): Promise<Redis> {
  const c = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false, connectTimeout: 5000, connectionName: 'gw-preflight' });
  let lastError: unknown;
  c.on('error', (err) => (lastError = err));
  try {
    await c.connect();
    await c.ping(); // fails with NOAUTH when the URL carries no password and the server wants one
    return c;
  } catch (err) {
    c.disconnect();
    // connect() rejects with "Connection is closed"; the cause (ECONNREFUSED, WRONGPASS) came as an event
    const auth = [lastError, err].find((e) => /NOAUTH|WRONGPASS/.test(String((e as Error)?.message)));
    const coded = [lastError, err].find((e) => (e as { code?: string })?.code);
    throw explainRedis(auth ?? coded ?? lastError ?? err, url);
  }
}

async function configGet(c: Redis, key: string): Promise<string | undefined | Error> {
  try {
    const r = (await c.config('GET', key)) as string[];
    return r[1];
  } catch (err) {
    return err as Error; // managed Redis often refuses CONFIG
  }
}

/**
 * Redis as the gateway needs it: reachable, a supported version, `maxmemory-policy noeviction` (an
 * evicting policy drops queued jobs and usage events: refused in production), and AOF on in production.
 */
export async function checkRedis(url: string, production: boolean): Promise<Check[]> {
  let c: Redis;
  try {
    c = await probeRedis(url);
  } catch (err) {
    return [fail('redis', (err as Error).message)];
  }
  const at = where(url);
  const [host, port] = at.split(':');
  try {
    const checks: Check[] = [ok('redis', `Redis answers at ${at}`)];
    const info = await c.info('server');
    const version = /redis_version:([^\r\n]+)/.exec(info)?.[1] ?? 'unknown';
    const vs = versionStatus(version, SUPPORTED.redis);
    const label = SUPPORTED.redis.label;
    checks.push(
      vs === 'ok'
        ? ok('redis version', `${version} (supported ${label})`)
        : vs === 'old'
          ? fail('redis version', `Redis ${version} is older than supported (${label}): upgrade Redis`)
          : warn('redis version', `Redis ${version} is newer than tested (${label})`),
    );

    const policy = await configGet(c, 'maxmemory-policy');
    if (policy instanceof Error || policy === undefined) {
      checks.push(warn('redis maxmemory-policy', `could not verify maxmemory-policy (CONFIG GET refused${policy ? `: ${policy.message.split('\n')[0]}` : ''}); make sure it is noeviction (your provider's parameter group)`));
    } else if (policy !== 'noeviction') {
      const fix = `run \`redis-cli -h ${host} -p ${port} CONFIG SET maxmemory-policy noeviction\` and set \`maxmemory-policy noeviction\` in redis.conf (managed Redis: its parameter group)`;
      const line = `Redis maxmemory-policy is ${policy}: under memory pressure Redis evicts queued jobs and unbilled usage events; ${fix}`;
      checks.push(production ? fail('redis maxmemory-policy', line) : warn('redis maxmemory-policy', `${line} (refused when NODE_ENV=production)`));
    } else {
      checks.push(ok('redis maxmemory-policy', 'noeviction'));
    }

    const aof = await configGet(c, 'appendonly');
    if (aof instanceof Error || aof === undefined) {
      checks.push(warn('redis persistence', 'could not verify AOF (CONFIG GET refused); make sure appendonly is yes (your provider\'s persistence setting)'));
    } else if (aof !== 'yes') {
      const line = 'Redis AOF is off: a Redis restart loses queued jobs and the usage events not yet written to Postgres (unbilled requests)';
      checks.push(
        production
          ? warn('redis persistence', `WARNING ${line}; run \`redis-cli -h ${host} -p ${port} CONFIG SET appendonly yes\` and set \`appendonly yes\` in redis.conf`)
          : ok('redis persistence', 'AOF off (acceptable outside production)'),
      );
    } else {
      checks.push(ok('redis persistence', 'AOF on'));
    }
    return checks;
  } finally {
    c.disconnect();
  }
}
