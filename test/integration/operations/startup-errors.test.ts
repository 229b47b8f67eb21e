import net from 'net';
import { expect } from 'chai';
import { Client } from 'pg';
import { runToEnd, spawnWith } from '../../helpers/process';
import { startOwnRedis, type OwnRedis } from '../../helpers/own-redis';
import { freePort } from '../../../scripts/services/free-port';
import { waitFor } from '../../helpers/wait';

/** A loopback port nothing listens on (taken from the OS, then released). */
const closedPort = freePort;

/** The one line a failed start prints: exactly one stderr line, exit code 1. */
function expectOneLine(r: { code: number | null; lines: string[]; stderr: string }, pattern: RegExp): void {
  expect(r.code, r.stderr).to.equal(1);
  expect(r.lines, r.stderr).to.have.length(1);
  expect(r.lines[0]).to.match(pattern);
  expect(r.stderr).not.to.match(/\n\s+at /); // no stack trace without LOG_LEVEL=debug
}

describe('operations: a failed start is one line naming the cause and the fix', function () {
  this.timeout(60_000);

  it('port in use: names the port and PORT / ADMIN_PORT', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, resolve));
    const { port } = holder.address() as net.AddressInfo;
    try {
      const web = await runToEnd('api/server.js', [], { PORT: String(port), LOG_LEVEL: 'silent' });
      expectOneLine(web, new RegExp(`^web cannot start: port ${port} is already in use: stop what listens there or set PORT to a free port$`));
      const admin = await runToEnd('api/admin/server.js', [], { ADMIN_PORT: String(port), LOG_LEVEL: 'silent' });
      expectOneLine(admin, new RegExp(`^admin cannot start: port ${port} is already in use: .*set ADMIN_PORT`));
    } finally {
      holder.close();
    }
  });

  it('Redis down (a closed port): names the address and REDIS_URL, in the web and the worker processes', async () => {
    const port = await closedPort();
    const url = `redis://127.0.0.1:${port}`;
    const web = await runToEnd('api/server.js', [], { REDIS_URL: url, PORT: String(await freePort()) });
    expectOneLine(web, new RegExp(`^web cannot start: Redis at 127\\.0\\.0\\.1:${port} is unreachable \\(ECONNREFUSED\\): start Redis there or set REDIS_URL`));
    const workers = await runToEnd('workers/main.js', ['chat'], { REDIS_URL: url });
    expectOneLine(workers, /^workers cannot start: Redis at .* is unreachable \(ECONNREFUSED\): .*REDIS_URL/);
     const clock = await runToEnd('workers/cron/clock.js', [], { REDIS_URL: url });
    expectOneLine(clock, /^clock cannot start: Redis at .* is unreachable \(ECONNREFUSED\): .*REDIS_URL/);
  });

  it('Redis refusing the login: names REDIS_URL and where the password goes', async () => {
    const locked = await startOwnRedis(['--requirepass', 'right-password-123']);
    try {
      const none = await runToEnd('api/admin/server.js', [], { REDIS_URL: locked.url, ADMIN_PORT: String(await freePort()) });
      expectOneLine(none, /^admin cannot start: Redis at 127\.0\.0\.1:\d+ refused authentication \(NOAUTH.*\): put the right user and password in REDIS_URL/);
      const wrong = await runToEnd('api/admin/server.js', [], { REDIS_URL: `redis://:wrong-password@127.0.0.1:${locked.port}`, ADMIN_PORT: String(await freePort()) });
      expectOneLine(wrong, /^admin cannot start: Redis at .* refused authentication \(WRONGPASS.*\): put the right user and password in REDIS_URL/);
      expect(wrong.stderr).not.to.include('wrong-password'); // the secret is not echoed
    } finally {
      await locked.stop();
    }
  });

  it('the stack only with LOG_LEVEL=debug', async () => {
    const r = await runToEnd('api/server.js', [], { REDIS_URL: `redis://127.0.0.1:${await closedPort()}`, LOG_LEVEL: 'debug' });
    expect(r.code).to.equal(1);
    expect(r.lines[0]).to.match(/^web cannot start: Redis at .* is unreachable/);
    expect(r.stderr).to.match(/\n\s+at /);
  });

  it('Postgres down (a closed port): names the address and DATABASE_URL', async () => {
    const port = await closedPort();
    const r = await runToEnd('api/server.js', [], { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/gateway`, PORT: String(await freePort()) });
    expectOneLine(r, new RegExp(`^web cannot start: Postgres at 127\\.0\\.0\\.1:${port} is unreachable \\(ECONNREFUSED\\): start Postgres there or set DATABASE_URL`));
  });

  it('a missing or weak SECRET_KEY: names SECRET_KEY and how to make one', async () => {
    const weak = await runToEnd('api/server.js', [], { SECRET_KEY: 'a'.repeat(48) });
    expectOneLine(weak, /SECRET_KEY is too weak: it needs 32\+ characters and 10\+ different ones \(set SECRET_KEY to a random value .*openssl rand -hex 32/);
    const short = await runToEnd('workers/main.js', ['chat'], { SECRET_KEY: 'short' });
    expectOneLine(short, /SECRET_KEY is too weak/);
    const missing = await runToEnd('api/admin/server.js', [], { SECRET_KEY: undefined });
    expectOneLine(missing, /SECRET_KEY is not set \(set SECRET_KEY to a random value/);
  });

  it('migrations pending: names the release command', async () => {
    const base = new URL(process.env.DATABASE_URL!);
    const name = `${base.pathname.slice(1)}_empty`;
    const admin = new Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${name}"`);
    await admin.query(`CREATE DATABASE "${name}"`);
    try {
      const empty = new URL(base);
      empty.pathname = `/${name}`;
      const r = await runToEnd('api/server.js', [], { DATABASE_URL: empty.toString(), PORT: String(await freePort()) });
      expectOneLine(r, /^web cannot start: \d+ migration\(s\) pending \(0001-foundation, .*\): run the release step `node dist\/scripts\/migrate\.js` \(or `npx gateway migrate`\)$/);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    }
  });

  describe('Redis with maxmemory-policy allkeys-lru', () => {
    let lru: OwnRedis;
    before(async () => {
      lru = await startOwnRedis(['--maxmemory-policy', 'allkeys-lru']);
    });
    after(() => lru.stop());

    it('refuses to start in production, naming the setting and the fix', async () => {
      const r = await runToEnd('api/server.js', [], { NODE_ENV: 'production', REDIS_URL: lru.url, PORT: String(await freePort()), LOG_LEVEL: 'silent' });
      expectOneLine(
        r,
        new RegExp(`^web cannot start: Redis maxmemory-policy is allkeys-lru: .*evicts queued jobs and unbilled usage events; run \`redis-cli -h 127\\.0\\.0\\.1 -p ${lru.port} CONFIG SET maxmemory-policy noeviction\` and set \`maxmemory-policy noeviction\` in redis\\.conf`),
      );
    });

    it('starts with a warning outside production', async () => {
      const child = spawnWith('api/server.js', [], { NODE_ENV: 'development', REDIS_URL: lru.url, PORT: String(await freePort()), LOG_LEVEL: 'warn' });
      let out = '';
      child.stdout!.on('data', (d) => (out += String(d)));
      try {
        expect(await waitFor(() => out.includes('maxmemory-policy is allkeys-lru'), 20_000), out).to.equal(true);
        expect(out).to.include('refused when NODE_ENV=production');
        // no exit: it goes on to serve
        await new Promise((r) => setTimeout(r, 1000));
        expect(child.exitCode).to.equal(null);
      } finally {
        child.kill('SIGKILL');
      }
    });
  });
});
