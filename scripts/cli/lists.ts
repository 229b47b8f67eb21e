import type { Command } from 'commander';
import { Membership, Organization, Plan, User } from '../../shared/db/models';
import { findOrg } from '../../shared/tenancy/ops';
import { orgUsageFigures, usageTotals } from '../../shared/billing/usage-figures';
import { utcDay } from '../../shared/metering/rollups';
import { fail, withServices } from './with-services';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;
/** The usage report reads at most this many days back from today (the figures' own window). */
const MAX_REPORT_DAYS = 366;

/** A sub-command group by name, made when no other file has made it yet. */
const group = (program: Command, name: string, description: string) =>
  program.commands.find((c) => c.name() === name) ?? program.command(name).description(description);

function checkDay(d: string): string {
  if (!DAY.test(d) || utcDay(new Date(`${d}T00:00:00Z`)) !== d) fail(`'${d}' is not a day (YYYY-MM-DD)`);
  return d;
}

const usd = (micros: number) => `$${(micros / 1e6).toFixed(4)}`;

/** The CLI's read side: `org list`, `user list`, `usage --org` (`key list` sits with key create). */
export function registerLists(program: Command): void {
  group(program, 'org', 'organizations')
    .command('list')
    .description('list organizations: slug, id, plan, members, name')
    .option('--json', 'print JSON')
    .action((o: { json?: boolean }) =>
      withServices(async () => {
        const orgs = await Organization.findAll({ order: [['slug', 'ASC']] });
        const plans = new Map((await Plan.findAll()).map((p) => [p.id, p.name]));
        const members = new Map<string, number>();
        for (const m of await Membership.findAll({ attributes: ['orgId'] })) members.set(m.orgId, (members.get(m.orgId) ?? 0) + 1);
        const rows = orgs.map((g) => ({ id: g.id, slug: g.slug, name: g.name, plan: g.planId ? (plans.get(g.planId) ?? null) : null, members: members.get(g.id) ?? 0 }));
        if (o.json) return console.log(JSON.stringify(rows));
        for (const r of rows) console.log(`${r.slug.padEnd(24)} ${r.id}  ${String(r.plan ?? '-').padEnd(10)} ${String(r.members).padStart(3)} member(s)  ${r.name}`);
      }),
    );

  group(program, 'user', 'users')
    .command('list')
    .description('list users (email, id, platform admin, deleted); with --org, that org\'s members and their roles')
    .option('--org <org>', 'only members of this org (id or slug)')
    .option('--json', 'print JSON')
    .action((o: { org?: string; json?: boolean }) =>
      withServices(async () => {
        const org = o.org ? ((await findOrg(o.org)) ?? fail(`unknown org '${o.org}'`)) : null;
        const roles = org ? new Map((await Membership.findAll({ where: { orgId: org.id } })).map((m) => [m.userId, m.role])) : null;
        const users = await User.findAll({ where: roles ? { id: [...roles.keys()] } : {}, order: [['email', 'ASC']] });
        const rows = users.map((u) => ({
          id: u.id,
          email: u.email,
          name: u.name,
          is_platform_admin: u.isPlatformAdmin,
          deleted: u.deletedAt !== null,
          ...(roles ? { role: roles.get(u.id) } : {}),
        }));
        if (o.json) return console.log(JSON.stringify(rows));
        for (const r of rows) {
          const marks = [r.role, r.is_platform_admin && 'platform admin', r.deleted && 'deleted'].filter(Boolean).join(', ');
          console.log(`${r.email.padEnd(32)} ${r.id}  ${marks || '-'}  ${r.name ?? ''}`);
        }
      }),
    );

  // `gateway usage --org <org>` is the report; `gateway usage rollup` (scripts/cli/usage.ts) the maintenance.
  group(program, 'usage', 'usage ledger')
    .description('an org\'s usage per UTC day, model and modality, with totals (the dashboard\'s figures; default the last 30 days), or ledger maintenance (rollup)')
    .enablePositionalOptions()
    .option('--org <org>', 'the report\'s org (id or slug)')
    .option('--from <day>', 'first UTC day, YYYY-MM-DD (default: 29 days before --to)')
    .option('--to <day>', 'last UTC day, YYYY-MM-DD (default: today)')
    .option('--json', 'print JSON')
    .action((o: { org?: string; from?: string; to?: string; json?: boolean }) =>
      withServices(async () => {
        if (!o.org) fail('name the org: gateway usage --org <org> [--from YYYY-MM-DD] [--to YYYY-MM-DD]');
        const today = utcDay(new Date());
        const to = checkDay(o.to ?? today);
        const from = o.from ? checkDay(o.from) : utcDay(new Date(Date.parse(to) - 29 * DAY_MS));
        if (from > to) fail('--from is after --to');
        const back = Math.round((Date.parse(today) - Date.parse(from)) / DAY_MS) + 1;
        if (back > MAX_REPORT_DAYS) fail(`--from reaches back at most ${MAX_REPORT_DAYS} days`);
        const org = (await findOrg(o.org)) ?? fail(`unknown org '${o.org}'`);
        const figures = await orgUsageFigures(org.id, Math.max(back, 1));
        const rows = figures.rows.filter((r) => r.day >= from && r.day <= to);
        const totals = usageTotals(rows);
        if (o.json) return console.log(JSON.stringify({ org: org.slug, org_id: org.id, from, to, rows, totals }));
        console.log(`usage of ${org.slug} from ${from} to ${to} (UTC days)`);
        for (const r of rows) {
          console.log(`${r.day}  ${r.model.padEnd(24)} ${r.modality.padEnd(14)} ${String(r.requests).padStart(7)} req  ${String(r.inputTokens).padStart(9)} in  ${String(r.outputTokens).padStart(9)} out  ${usd(r.costMicros)}`);
        }
        console.log(`total: ${totals.requests} request(s), ${totals.input_tokens} input and ${totals.output_tokens} output token(s), ${totals.audio_seconds} audio second(s), ${usd(totals.cost_micros)}`);
      }),
    );
}
