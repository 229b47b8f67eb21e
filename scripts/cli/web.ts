import type { Command } from 'commander';
import { Membership, Project } from '../../shared/db/models';
import { config } from '../../shared/config/env';
import { findOrg, createProject, slugify } from '../../shared/tenancy/ops';
import { archiveProject, setProjectBudget } from '../../shared/tenancy/projects';
import { controlsView, validControls, type KeyControlsInput } from '../../shared/limits/key-input';
import { isUuid } from '../../shared/uuid';
import { budgetStatus } from '../../shared/limits/limits';
import { findUser } from '../../shared/platform/keys';
import { setPassword, WeakPasswordError } from '../../shared/web/passwords';
import { createPasswordLink, passwordLinkPath } from '../../shared/web/password-links';
import { recordAudit, type Actor } from '../../shared/audit/audit';
import { fail, withServices } from './with-services';
import { removeMember, updateMemberLimits } from '../../shared/tenancy/members';
import { addMember } from '../../shared/tenancy/kept-limits';
import { db } from '../../shared/db/sequelize';
import { memberLimitOptions, memberLimitsFromFlags, type KeyControlFlags } from './key-controls';
import { memberLimitsView } from '../../shared/limits/key-input';

const cliActor = (): Actor => ({ type: 'cli', id: null, label: `cli:${process.env.USER ?? 'operator'}` });
const webBase = () => config().publicBaseUrl ?? `http://127.0.0.1:${config().port}`;

interface BudgetFlags { budgetUsd?: string; budgetPeriod?: string }

/** --budget-usd ("" or "none": no budget) and --budget-period as the API's fields. */
function budgetFromFlags(f: BudgetFlags): Pick<KeyControlsInput, 'budget_usd' | 'budget_period'> {
  if (f.budgetUsd === undefined) fail('give --budget-usd (a number of US dollars, or "" for none)');
  const usd = f.budgetUsd.trim() === '' || f.budgetUsd === 'none' ? null : Number(f.budgetUsd);
  if (usd !== null && !Number.isFinite(usd)) fail(`--budget-usd must be a number of US dollars, not '${f.budgetUsd}'`);
  const b = { budget_usd: usd, ...(f.budgetPeriod !== undefined ? { budget_period: f.budgetPeriod as KeyControlsInput['budget_period'] } : {}) };
  try {
    validControls(b); // refused before anything is written
  } catch (err) {
    fail((err as Error).message);
  }
  return b;
}

const budgetView = (p: Project) => {
  const v = controlsView({ allowedModels: null, rpm: null, tpm: null, expiresAt: null, budgetMicros: p.budgetMicros, budgetPeriod: p.budgetPeriod });
  return { budget_usd: v.budget_usd, budget_period: v.budget_period };
};
const budgetLine = (p: Project) => {
  const v = budgetView(p);
  return v.budget_usd === null ? '' : `  budget $${v.budget_usd}/${v.budget_period}`;
};

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0];
}

/** Web sign-in and tenancy commands: passwords, links, memberships, projects. */
export function registerWeb(program: Command): void {
  const user = program.commands.find((c) => c.name() === 'user') ?? program.command('user');
  user
    .command('set-password')
    .description('set a user\'s web sign-in password, read from the first line of stdin')
    .requiredOption('--user <email>')
    .action((o: { user: string }) =>
      withServices(async () => {
        const u = (await findUser(o.user)) ?? fail(`unknown user '${o.user}'`);
        try {
          await setPassword(u, await readStdin());
        } catch (err) {
          if (err instanceof WeakPasswordError) fail(err.message);
          throw err;
        }
        await recordAudit({ actor: cliActor(), method: 'PUT', path: `/cli/users/${u.id}/password`, family: 'users', targetId: u.id, status: 200 });
        console.log(`password set for ${u.email}`);
      }),
    );
  user
    .command('password-link')
    .description('print a one-use link where the user chooses a password (reset: 1 hour; --invite: 7 days)')
    .requiredOption('--user <email>')
    .option('--invite', 'an invitation link (valid 7 days)')
    .action((o: { user: string; invite?: boolean }) =>
      withServices(async (redis) => {
        const u = (await findUser(o.user)) ?? fail(`unknown user '${o.user}'`);
        const token = await createPasswordLink(redis, u.id, o.invite ? 'invite' : 'reset');
        await recordAudit({ actor: cliActor(), method: 'POST', path: `/cli/users/${u.id}/password-link`, family: 'users', targetId: u.id, status: 201, fields: [o.invite ? 'invite' : 'reset'] });
        console.log(`${webBase()}${passwordLinkPath(token)}`);
      }),
    );

  const member = program.command('member').description('organization memberships');
  member
    .command('add')
    .description("add a user to an organization, or change their role (keys revoked by an earlier removal stay revoked; the limits, search cap and switch an owner set on them before it come back)")
    .requiredOption('--org <org>', 'org id or slug')
    .requiredOption('--user <email>')
    .option('--role <role>', 'owner or member', 'member')
    .action((o: { org: string; user: string; role: string }) =>
      withServices(async () => {
        if (!['owner', 'member'].includes(o.role)) fail(`--role must be owner or member`);
        const org = (await findOrg(o.org)) ?? fail(`unknown org '${o.org}'`);
        const u = (await findUser(o.user)) ?? fail(`unknown user '${o.user}'`);
        const role = o.role as 'owner' | 'member';
        // added back: what an owner had set on them comes back with them (shared/tenancy/kept-limits.ts)
        const m = await db().transaction(async (transaction) => {
          const was = await Membership.findOne({ where: { orgId: org.id, userId: u.id }, transaction });
          return was ? was.update({ role }, { transaction }) : addMember(org.id, u.id, role, transaction);
        });
        const limits = memberLimitsView(m);
        const kept = limits.allowed_models || limits.rpm || limits.tpm || limits.budget_usd !== null;
        console.log(`${u.email} is ${o.role} of ${org.slug}${kept ? ' (with the limits an owner set on them before their removal: gateway member limits changes them)' : ''}`);
      }),
    );

  member
    .command('remove')
    .description("remove a user from an organization; their API keys in it are revoked on every pod at once")
    .requiredOption('--org <org>', 'org id or slug')
    .requiredOption('--user <email>')
    .action((o: { org: string; user: string }) =>
      withServices(async (redis) => {
        const org = (await findOrg(o.org)) ?? fail(`unknown org '${o.org}'`);
        const u = (await findUser(o.user)) ?? fail(`unknown user '${o.user}'`);
        const done = await removeMember(redis, org.id, u.id, { actor: cliActor(), path: `/cli/organizations/${org.id}/members/${u.id}` });
        if (!done.removed) fail(`${u.email} is not a member of ${org.slug}`);
        console.log(`${u.email} removed from ${org.slug}; ${done.revokedKeys} API key(s) revoked`);
      }),
    );

  memberLimitOptions(member
    .command('limits')
    .description("set a member's limits (only the flags given; 0 or \"\" clears one): they apply to every key the member owns in the org, on top of the key's own, rates and budget counted over all those keys; every pod applies them on its next request")
    .requiredOption('--org <org>', 'org id or slug')
    .requiredOption('--user <email>')
    .option('--json', 'print JSON'))
    .action((o: { org: string; user: string; json?: boolean } & Omit<KeyControlFlags, 'expires'>) =>
      withServices(async (redis) => {
        const limits = memberLimitsFromFlags(o);
        if (!Object.keys(limits).length) fail('nothing to change: give at least one of --models, --rpm, --tpm, --budget-usd, --budget-period');
        const org = (await findOrg(o.org)) ?? fail(`unknown org '${o.org}'`);
        const u = (await findUser(o.user)) ?? fail(`unknown user '${o.user}'`);
        const m = (await updateMemberLimits(redis, org.id, u.id, limits)) ?? fail(`${u.email} is not a member of ${org.slug}`);
        await recordAudit({ actor: cliActor(), method: 'PATCH', path: `/cli/organizations/${org.id}/members/${u.id}`, family: 'organizations', targetId: `${org.id}/${u.id}`, status: 200, fields: Object.keys(limits) });
        const view = memberLimitsView(m);
        if (o.json) return console.log(JSON.stringify({ org_id: org.id, user_id: u.id, ...view }));
        const budget = view.budget_usd === null ? 'none' : `$${view.budget_usd} per ${view.budget_period}`;
        console.log(`${u.email} in ${org.slug}: models ${view.allowed_models?.join(',') ?? 'all'}, rpm ${view.rpm ?? 'none'}, tpm ${view.tpm ?? 'none'}, budget ${budget}`);
      }),
    );

  const project = program.command('project').description('projects of an organization');
  project
    .command('create')
    .description('create a project in an org (keys and usage can be bound to it)')
    .requiredOption('--org <org>', 'org id or slug')
    .requiredOption('--slug <slug>')
    .option('--name <name>', 'default: the slug')
    .option('--budget-usd <x>', "the project's spending limit in US dollars per --budget-period, shared by its keys")
    .option('--budget-period <p>', 'day | month | total (UTC days and months; default month)')
    .option('--json', 'print JSON')
    .action((o: { org: string; slug: string; name?: string; json?: boolean } & BudgetFlags) =>
      withServices(async (redis) => {
        const org = (await findOrg(o.org)) ?? fail(`unknown org '${o.org}'`);
        const slug = slugify(o.slug);
        const budget = o.budgetUsd !== undefined || o.budgetPeriod !== undefined ? budgetFromFlags(o) : null;
        if (await Project.findOne({ where: { orgId: org.id, slug } })) fail(`project '${slug}' already exists in ${org.slug}`);
        const p = await createProject(redis, org.id, o.name ?? slug, slug);
        if (budget) await setProjectBudget(redis, p, budget);
        console.log(o.json ? JSON.stringify({ id: p.id, slug: p.slug, name: p.name, org_id: org.id, ...budgetView(p) }) : `created project ${p.slug} (${p.id}) in ${org.slug}${budgetLine(p)}`);
      }),
    );
  project
    .command('update')
    .description("set or remove a project's spending limit (--budget-usd \"\" removes it); every pod applies it on its next request")
    .requiredOption('--org <org>', 'org id or slug')
    .requiredOption('--project <project>', 'id or slug')
    .option('--budget-usd <x>', 'spending limit in US dollars per --budget-period; "" for none')
    .option('--budget-period <p>', 'day | month | total (UTC days and months; default month)')
    .option('--json', 'print JSON')
    .action((o: { org: string; project: string; json?: boolean } & BudgetFlags) =>
      withServices(async (redis) => {
        const org = (await findOrg(o.org)) ?? fail(`unknown org '${o.org}'`);
        const p = (await Project.findOne({ where: { orgId: org.id, ...(isUuid(o.project) ? { id: o.project } : { slug: o.project }) } })) ?? fail(`no project '${o.project}' in ${org.slug}`);
        await setProjectBudget(redis, p, budgetFromFlags(o));
        await recordAudit({ actor: cliActor(), method: 'PATCH', path: `/cli/organizations/${org.id}/projects/${p.id}`, family: 'organizations', targetId: p.id, status: 200, fields: ['budget_usd', 'budget_period'] });
        // spent, reserved and remaining of the current window, as the API's `budget` shows them
        const status = p.budgetMicros === null ? null : await budgetStatus(redis, org.id, 'project', p.id, { micros: p.budgetMicros, period: p.budgetPeriod ?? 'month' });
        console.log(o.json ? JSON.stringify({ id: p.id, slug: p.slug, ...budgetView(p), budget: status }) : `project ${p.slug}${budgetLine(p) || ': no budget'}${status ? `; $${status.spent_usd} spent, $${status.reserved_usd} reserved, $${status.remaining_usd} left` : ''}`);
      }),
    );
  project
    .command('list')
    .description("list an org's projects: id, slug, state, name, budget")
    .requiredOption('--org <org>')
    .action((o: { org: string }) =>
      withServices(async () => {
        const org = (await findOrg(o.org)) ?? fail(`unknown org '${o.org}'`);
        for (const p of await Project.findAll({ where: { orgId: org.id }, order: [['name', 'ASC']] })) console.log(`${p.id}  ${p.slug}  ${p.archivedAt ? 'archived' : 'active'}  ${p.name}${budgetLine(p)}`);
      }),
    );
  project
    .command('archive')
    .description('archive a project: it stays listed with its history and is no longer accepted as a request\'s project')
    .requiredOption('--org <org>')
    .requiredOption('--project <project>', 'id or slug')
    .action((o: { org: string; project: string }) =>
      withServices(async (redis) => {
        const org = (await findOrg(o.org)) ?? fail(`unknown org '${o.org}'`);
        const p = (await archiveProject(redis, org.id, o.project)) ?? fail(`no active project '${o.project}' in ${org.slug}`);
        console.log(`archived ${p.slug}`);
      }),
    );
}
