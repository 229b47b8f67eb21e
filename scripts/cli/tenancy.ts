import type { Command } from 'commander';
import { db } from '../../shared/db/sequelize';
import { createApiKey, createOrg, findOrg, listApiKeys, revokeApiKey, slugify, updateKeyControls, rotateApiKey } from '../../shared/tenancy/ops';
import { controlsFromFlags, keyControlOptions, type KeyControlFlags } from './key-controls';
import { Membership, Organization, Project, User } from '../../shared/db/models';
import { fail, withServices } from './with-services';
import { isUuid } from '../../shared/uuid';

/** migrate, seed, org and key commands. */
export function registerTenancy(program: Command): void {
program.command('migrate').description('run pending database migrations').action(() =>
  withServices(async () => {
    const { migrate } = require('../../shared/db/migrate') as typeof import('../../shared/db/migrate'); // umzug: this command's only
    const done = await migrate(db());
    console.log(done.length ? `applied: ${done.join(', ')}` : 'database is up to date');
  }),
);

program
  .command('seed')
  .description('seed plans, the default catalog and the demo organization (idempotent)')
  .option('--simulator-url <url>', 'where the upstream simulator listens', process.env.SIMULATOR_URL ?? 'http://127.0.0.1:8090')
  .action((opts: { simulatorUrl: string }) =>
    withServices(async (redis) => {
      const { seed } = require('../../shared/db/seed') as typeof import('../../shared/db/seed');
      const { demoKey } = await seed(redis, opts.simulatorUrl);
      console.log(demoKey ? `demo API key (shown once): ${demoKey.key}` : 'seeded (demo organization already existed)');
    }),
  );

const org = program.command('org').description('organizations');
org
  .command('create <name>')
  .description('create an organization (its slug must be unused)')
  .option('--slug <slug>', 'url-safe id (default: from the name)')
  .option('--plan <plan>', 'plan name (free, pro, ...)')
  .option('--json', 'print JSON')
  .action((name: string, opts: { slug?: string; plan?: string; json?: boolean }) =>
    withServices(async (redis) => {
      const slug = opts.slug ?? slugify(name);
      if (await Organization.findOne({ where: { slug } })) fail(`an organization with slug '${slug}' already exists (gateway org list shows them; pick another with --slug)`);
      const o = await createOrg(redis, { name, slug, plan: opts.plan });
      console.log(opts.json ? JSON.stringify({ id: o.id, name: o.name, slug: o.slug }) : `created org ${o.slug} (${o.id})`);
    }),
  );

const key = program.command('key').description('inference API keys');
keyControlOptions(key
  .command('create')
  .description('create an inference API key (svc_…), printed once')
  .requiredOption('--org <org>', 'org id or slug')
  .option('--project <project>', 'bind the key to a project (id or slug)')
  .option('--name <name>', 'a label')
  .option('--user <email>', 'the key belongs to this member of the org (their search switch, cap and tool policy apply; it stops working when they leave); without it the key is organization-wide')
  .option('--json', 'print JSON'))
  .action((opts: { org: string; project?: string; name?: string; user?: string; json?: boolean } & KeyControlFlags) =>
    withServices(async (redis) => {
      const controls = controlsFromFlags(opts);
      const o = await findOrg(opts.org);
      if (!o) fail(`unknown org '${opts.org}'`);
      let projectId: string | null = null;
      if (opts.project) {
        const p = await Project.findOne({ where: { orgId: o.id, slug: opts.project } }) ?? (isUuid(opts.project) ? await Project.findOne({ where: { orgId: o.id, id: opts.project } }) : null);
        if (!p) fail(`unknown project '${opts.project}' in org ${o.slug}`);
        projectId = p.id;
      }
      let userId: string | null = null;
      if (opts.user) {
        const u = await User.findOne({ where: { email: opts.user, deletedAt: null } });
        const m = u ? await Membership.findOne({ where: { orgId: o.id, userId: u.id } }) : null;
        if (!u || !m) fail(`'${opts.user}' is not a member of org ${o.slug}`);
        userId = u.id;
      }
      const k = await createApiKey(redis, { orgId: o.id, projectId, name: opts.name, userId, controls });
      if (opts.json) console.log(JSON.stringify(k));
      else console.log(`key ${k.id} (${opts.user ? `belongs to ${opts.user}` : 'organization-wide'}; shown once, store it now):\n${k.key}`);
    }),
  );
keyControlOptions(key
  .command('update <id>')
  .description("change a key's allowed models, rate limits, budget or expiry (only the flags given); every pod applies it on its next request"))
  .action((id: string, opts: KeyControlFlags) =>
    withServices(async (redis) => {
      const controls = controlsFromFlags(opts);
      if (!Object.keys(controls).length) fail('nothing to change: give at least one of --models, --rpm, --tpm, --budget-usd, --budget-period, --expires');
      if (!(await updateKeyControls(redis, id, controls))) fail(`no key ${id}`);
      console.log(`updated ${id}`);
    }),
  );
key
  .command('rotate <id>')
  .description('issue a new secret for a key (same id, owner, limits and budget), printed once; the old secret keeps working for --grace seconds')
  .option('--grace <seconds>', 'how long the old secret keeps working (0: stops at once)', '86400')
  .option('--json', 'print JSON')
  .action((id: string, opts: { grace: string; json?: boolean }) =>
    withServices(async (redis) => {
      const grace = Number(opts.grace);
      if (!Number.isInteger(grace) || grace < 0 || grace > 90 * 86400) fail('--grace must be a whole number of seconds from 0 to 7776000 (90 days)');
      const k = await rotateApiKey(redis, id, grace);
      if (!k) fail(`no active key ${id}`);
      if (opts.json) console.log(JSON.stringify({ ...k, previous_secret_until: new Date(Date.now() + grace * 1000).toISOString() }));
      else console.log(`key ${k.id} rotated; the old secret works for ${grace} s more. New secret (shown once, store it now):\n${k.key}`);
    }),
  );
key
  .command('revoke <id>')
  .description('revoke an inference API key at once, on every pod')
  .action((id: string) =>
    withServices(async (redis) => {
      if (!(await revokeApiKey(redis, id))) fail(`no active key ${id}`);
      console.log(`revoked ${id}`);
    }),
  );
key
  .command('list')
  .description("list an org's API keys: id, visible prefix, state, name (never the key)")
  .requiredOption('--org <org>', 'org id or slug')
  .option('--json', 'print JSON')
  .action((opts: { org: string; json?: boolean }) =>
    withServices(async () => {
      const o = await findOrg(opts.org);
      if (!o) fail(`unknown org '${opts.org}'`);
      const keys = await listApiKeys(o.id);
      if (opts.json) return console.log(JSON.stringify(keys));
      const owners = await User.findAll({ where: { id: keys.map((k) => k.userId).filter((u): u is string => !!u) } });
      const owner = (id: string | null) => (id ? (owners.find((u) => u.id === id)?.email ?? id) : 'org-wide');
      for (const k of keys) console.log(`${k.id}  ${k.prefix}…  ${k.revokedAt ? 'revoked' : 'active'}  ${owner(k.userId)}  ${k.name ?? ''}`);
    }),
  );
}
