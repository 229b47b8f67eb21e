import fs from 'fs';
import os from 'os';
import path from 'path';
import { execSync, type ChildProcess } from 'child_process';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { spawnWith, runToEnd } from '../../helpers/process';
import { waitFor } from '../../helpers/wait';
import { freePort } from '../../../scripts/services/free-port';
import { ensureServices } from '../../../scripts/services';
import { ensureDatabase } from '../../../scripts/services/postgres';
import { deleteKeysByPrefix } from '../../../scripts/services/redis';
import { acquireInstanceLock, readInstance } from '../../../scripts/services/instance-lock';
import { readSwitches, setSwitch } from '../../../shared/switches/switches';

/** `npm start` (dist/scripts/start.js) in a folder of its own, on a database and Redis prefix of its own. */
async function startEmbedded(cwd: string, env: Record<string, string>) {
  const child = spawnWith('scripts/start.js', [], env, cwd);
  let stdout = '';
  child.stdout!.on('data', (d) => (stdout += String(d)));
  child.stderr!.on('data', (d) => (stdout += String(d)));
  const up = await waitFor(() => stdout.includes('Ctrl-C stops everything.') || child.exitCode !== null, 60_000, 100);
  if (!up || child.exitCode !== null) throw new Error(`npm start did not come up: ${stdout}`);
  return { child, output: () => stdout };
}

const ended = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));

describe('the first start: one instance per data folder, steps shown, Redis kept under .data', function () {
  this.timeout(120_000);
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-first-start-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a second npm start on the same .data refuses in one line naming the running one (pid, URL) and changes nothing; the first keeps serving', async () => {
    const database = `${process.env.TEST_DATABASE_NAME ?? 'gateway_test'}_start`;
    const prefix = `${process.env.REDIS_PREFIX}start`;
    const databaseUrl = await ensureDatabase(process.env.DATABASE_URL!, database, true);
    // a port found free may be taken by another process before the start binds it (the other test
    // shard runs beside this one): then the start refuses it, and this takes fresh ports and tries again
    let port = 0;
    let env: Record<string, string> = {};
    let first: Awaited<ReturnType<typeof startEmbedded>> | undefined;
    for (let attempt = 1; !first; attempt++) {
      port = await freePort();
      env = { DATABASE_URL: databaseUrl, REDIS_PREFIX: prefix, PORT: String(port), ADMIN_PORT: String(await freePort()), SIMULATOR_PORT: String(await freePort()), LOG_LEVEL: 'silent' };
      try {
        first = await startEmbedded(dir, env);
      } catch (err) {
        if (attempt >= 3 || !/is already in use/.test(String(err))) throw err;
      }
    }
    try {
      // What the first start says before its banner, step by step.
      const steps = ['starting Redis and Postgres', 'migrating the database', 'seeding plans', 'starting the worker pools'];
      const at = steps.map((s) => first.output().indexOf(s));
      expect(at.every((i, n) => i >= 0 && (n === 0 || i > at[n - 1])), first.output()).to.equal(true);
      expect(at[steps.length - 1]).to.be.below(first.output().indexOf(`gateway  http://localhost:${port}`));

      const lockFile = path.join(dir, '.data', 'gateway.pid');
      expect(readInstance(lockFile)).to.include({ pid: first.child.pid, url: `http://localhost:${port}` });
      const envBefore = fs.readFileSync(path.join(dir, '.data', 'env.json'), 'utf8');

      const second = await runToEnd('scripts/start.js', [], { ...env, PORT: String(await freePort()), ADMIN_PORT: String(await freePort()), SIMULATOR_PORT: String(await freePort()) }, 30_000, dir);
      expect(second.code, second.stderr).to.equal(1);
      expect(second.lines, second.stderr).to.have.length(1);
      expect(second.lines[0]).to.equal(
        `gateway cannot start: another gateway is running on ${path.join(dir, '.data')} (pid ${first.child.pid}, http://localhost:${port}): use it, or stop it (Ctrl-C in its terminal, or kill ${first.child.pid}) before starting again`,
      );
      expect(second.stdout, 'it refused before starting anything').not.to.include('migrating');
      expect(fs.readFileSync(path.join(dir, '.data', 'env.json'), 'utf8')).to.equal(envBefore);
      expect(readInstance(lockFile), 'the running instance keeps its lock').to.include({ pid: first.child.pid, url: `http://localhost:${port}` });
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).to.equal(200);

      first.child.kill('SIGTERM');
      await ended(first.child);
      expect(fs.existsSync(lockFile), 'a stopped instance removes its lock').to.equal(false);
    } finally {
      if (first.child.exitCode === null) {
        first.child.kill('SIGKILL');
        await ended(first.child);
      }
      await deleteKeysByPrefix(process.env.REDIS_URL!, prefix);
      const admin = new Client({ connectionString: process.env.DATABASE_URL });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).finally(() => admin.end());
    }
  });

  it('npm start says it is compiling TypeScript before the build runs', async () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../../../package.json'), 'utf8')) as { scripts: Record<string, string> };
    const parts = pkg.scripts.start.split('&&').map((p) => p.trim());
    const build = parts.findIndex((p) => /^npm run build\b/.test(p));
    expect(build, pkg.scripts.start).to.be.above(0);
    const before = parts.slice(0, build).join(' && ');
    const said = execSync(before, { cwd: dir, encoding: 'utf8' });
    expect(said).to.match(/^compiling TypeScript \(about 2 minutes the first time, seconds after\)\.\.\.\n$/);
  });

  it('a lock left by an instance that is gone (pid dead, or reused by another program) is taken over, and removed on release', async () => {
    const root = path.join(dir, '.data');
    fs.mkdirSync(root);
    const gone = spawnWith('scripts/services/free-port.js', [], {});
    await ended(gone);
    fs.writeFileSync(path.join(root, 'gateway.pid'), JSON.stringify({ pid: gone.pid, url: 'http://localhost:1' }));
    const lock = acquireInstanceLock(root);
    lock.announce('http://localhost:2');
    expect(readInstance(path.join(root, 'gateway.pid'))).to.include({ pid: process.pid, url: 'http://localhost:2' });
    lock.release();
    expect(fs.existsSync(path.join(root, 'gateway.pid'))).to.equal(false);

    // A pid that is alive but now runs something else (reused after a crash) is not the instance.
    fs.writeFileSync(path.join(root, 'gateway.pid'), JSON.stringify({ pid: process.ppid, url: 'http://localhost:3', script: '/nowhere/dist/scripts/start.js' }));
    acquireInstanceLock(root).release();
    expect(fs.existsSync(path.join(root, 'gateway.pid'))).to.equal(false);
    expect(fs.readdirSync(root), 'no temporary file left').to.deep.equal([]);
  });

  it('the embedded Redis persists under .data: an engaged kill switch is still engaged after a restart', async () => {
    const saved = process.env.REDIS_URL;
    delete process.env.REDIS_URL; // the embedded default: start redis-server here
    const profile = { dataDir: '.data/dev', redisPort: await freePort(), pgPort: 1, database: 'unused' };
    try {
      const first = await ensureServices(profile, dir);
      const a = new Redis(first.redisUrl);
      await setSwitch(a, 'web_search', true);
      a.disconnect();
      await first.stop();

      const again = await ensureServices(profile, dir);
      const b = new Redis(again.redisUrl);
      try {
        expect((await readSwitches(b)).web_search).to.equal(true);
      } finally {
        b.disconnect();
        await again.stop();
      }
      expect(fs.existsSync(path.join(dir, '.data', 'dev', 'redis')), 'kept under .data/dev/redis').to.equal(true);
    } finally {
      process.env.REDIS_URL = saved;
    }
  });
});
