import { expect } from 'chai';
import { execFile } from 'child_process';
import path from 'path';
import { promisify } from 'util';
import type { Command } from 'commander';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { freePort } from '../../../scripts/services/free-port';
import { Membership, User } from '../../../shared/db/models';
import { utcDay } from '../../../shared/metering/rollups';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../../scripts/cli.js');
const gateway = (args: string[], extra: Record<string, string> = {}) => run(process.execPath, [cli, ...args], { env: { ...process.env, ...extra } });

/** A CLI run that must fail: its exit code and stderr. */
async function refused(args: string[], extra: Record<string, string> = {}): Promise<{ code: number; stderr: string; lines: string[] }> {
  try {
    await gateway(args, extra);
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr, lines: e.stderr.split('\n').filter((l) => l.trim()) };
  }
  throw new Error(`gateway ${args.join(' ')} should exit non-zero`);
}

describe('operator CLI: the read side, help, and one-line failures', function () {
  this.timeout(60_000);

  it('org list and user list show what exists (JSON and text), never a password hash', async () => {
    const o = await buildOrg(env().redis);
    const u = await User.create({ email: `cli-read-${Date.now()}@example.test`, name: 'Ada', passwordHash: 'scrypt$secret-hash-value' });
    await Membership.create({ orgId: o.org.id, userId: u.id, role: 'owner' });

    const orgs = JSON.parse((await gateway(['org', 'list', '--json'])).stdout) as Array<{ id: string; slug: string; plan: string; members: number }>;
    expect(orgs.find((r) => r.id === o.org.id)).to.include({ slug: o.org.slug, plan: 'pro', members: 1 });
    expect((await gateway(['org', 'list'])).stdout).to.match(new RegExp(`^${o.org.slug}\\s+${o.org.id}\\s+pro\\s+1 member`, 'm'));

    const members = JSON.parse((await gateway(['user', 'list', '--org', o.org.slug, '--json'])).stdout);
    expect(members).to.deep.equal([{ id: u.id, email: u.email, name: 'Ada', is_platform_admin: false, deleted: false, role: 'owner' }]);
    const all = await gateway(['user', 'list']);
    expect(all.stdout).to.match(new RegExp(`^${u.email.replace(/\./g, '\\.')}\\s+${u.id}\\s+-\\s+Ada$`, 'm'));
    expect(all.stdout + JSON.stringify(members)).not.to.include('secret-hash-value');
    expect((await refused(['user', 'list', '--org', 'no-such-org'])).lines).to.deep.equal(["unknown org 'no-such-org'"]);
  });

  it('usage --org reports the org\'s requests and tokens per day and model, within --from/--to', async () => {
    const o = await buildOrg(env().redis);
    for (let i = 0; i < 2; i++) {
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: `usage report ${i}` }] } });
      expect(r.status, r.text).to.equal(200);
    }
    await usageSettled();
    const today = utcDay(new Date());
    const report = JSON.parse((await gateway(['usage', '--org', o.org.slug, '--json'])).stdout);
    expect(report).to.include({ org: o.org.slug, org_id: o.org.id, to: today });
    expect(report.rows).to.have.length(1);
    expect(report.rows[0]).to.include({ day: today, model: 'sim-chat', modality: 'chat', requests: 2 });
    expect(report.rows[0].inputTokens).to.be.above(0);
    expect(report.totals.requests).to.equal(2);
    expect(report.totals.output_tokens).to.equal(report.rows[0].outputTokens);

    const text = (await gateway(['usage', '--org', o.org.slug, '--from', today, '--to', today])).stdout;
    expect(text).to.match(new RegExp(`^${today}\\s+sim-chat\\s+chat\\s+2 req`, 'm'));
    expect(text).to.match(/^total: 2 request\(s\)/m);
    const yesterday = utcDay(new Date(Date.now() - 86_400_000));
    const before = JSON.parse((await gateway(['usage', '--org', o.org.slug, '--to', yesterday, '--json'])).stdout);
    expect(before.rows, 'a window that ends yesterday has none of today\'s requests').to.deep.equal([]);
    expect(before.totals.requests).to.equal(0);

    expect((await refused(['usage', '--org', o.org.slug, '--from', today, '--to', yesterday])).lines).to.deep.equal(['--from is after --to']);
    expect((await refused(['usage', '--org', o.org.slug, '--from', '2026-02-30'])).lines).to.deep.equal(["'2026-02-30' is not a day (YYYY-MM-DD)"]);
    expect((await refused(['usage'])).lines[0]).to.match(/^name the org: gateway usage --org/);
    // the report's --from/--to and the rollup's are each their own
    expect((await gateway(['usage', 'rollup', '--from', '2001-01-01', '--to', '2001-01-02'])).stdout).to.include('rolled up 2 day(s) from 2001-01-01 to 2001-01-02');
  });

  it('every command and subcommand has a description in --help', async () => {
    const { program } = (await import(cli)) as { program: Command };
    const missing: string[] = [];
    const walk = (c: Command, at: string) => {
      for (const s of c.commands) {
        if (!s.description().trim()) missing.push(`${at} ${s.name()}`);
        walk(s, `${at} ${s.name()}`);
      }
    };
    walk(program, 'gateway');
    expect(missing).to.deep.equal([]);
    const help = (await gateway(['org', '--help'])).stdout;
    expect(help).to.match(/create \[options\] <name>\s+create an organization/);
    expect(help).to.match(/list \[options\]\s+list organizations/);
  });

  it('a duplicate org slug names the slug that exists, not "Validation error"', async () => {
    const slug = `cli-dup-${Date.now()}`;
    await gateway(['org', 'create', 'First', '--slug', slug]);
    const r = await refused(['org', 'create', 'Second', '--slug', slug]);
    expect(r.code).to.equal(1);
    expect(r.lines).to.have.length(1);
    expect(r.lines[0]).to.match(new RegExp(`^an organization with slug '${slug}' already exists`));
    const byName = await refused(['org', 'create', slug]); // the slug derived from the name
    expect(byName.lines[0]).to.match(new RegExp(`^an organization with slug '${slug}' already exists`));
  });

  it('with the stack stopped a command prints one line naming the fix (npm start, or DATABASE_URL / REDIS_URL), no raw error', async () => {
    const pg = await refused(['org', 'list'], { DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/gateway` });
    expect(pg.code).to.equal(1);
    expect(pg.lines, pg.stderr).to.have.length(1);
    expect(pg.lines[0]).to.match(/^Postgres at 127\.0\.0\.1:\d+ is unreachable \(ECONNREFUSED\): start Postgres there or set DATABASE_URL to where it runs; for the embedded default, start it with npm start$/);
    const noRedis = { REDIS_URL: `redis://127.0.0.1:${await freePort()}` };
    const redis = await refused(['switch', 'list'], noRedis);
    expect(redis.lines, redis.stderr).to.have.length(1);
    expect(redis.lines[0]).to.match(/^Redis at 127\.0\.0\.1:\d+ is unreachable \(ECONNREFUSED\): start Redis there or set REDIS_URL to where it runs; for the embedded default, start it with npm start$/);
    const reads = await gateway(['org', 'list', '--json'], noRedis);
    expect(JSON.parse(reads.stdout), 'a command that needs only Postgres still runs').to.be.an('array');
    expect(reads.stderr).to.equal('');
  });
});
