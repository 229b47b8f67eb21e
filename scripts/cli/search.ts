import type { Command } from 'commander';
import type { RedisClient } from '../../shared/redis/connection';
import { read } from 'read';
import { ApiKey, Membership, User } from '../../shared/db/models';
import { findOrg } from '../../shared/tenancy/ops';
import { sha256Hex } from '../../shared/crypto';
import { listOrgSearchKeys, removeOrgSearchKey, setMemberSearch, setOrgSearchKey, setOverage, type SettingsWrite } from '../../shared/search/settings';
import { searchBillingLine } from '../../shared/search/billing';
import { periodOf } from '../../shared/search/period';
import { ApiError } from '../../shared/errors/ApiError';
import { fail, withServices } from './with-services';

/**
 * The org a search command acts for: `--org <id|slug>`, else `SERVICE_ORG`, else the org of the
 * inference key in `SERVICE_API_KEY`.
 */
async function actingOrg(opt: string | undefined): Promise<{ id: string; slug: string }> {
  const given = opt ?? process.env.SERVICE_ORG;
  if (given) {
    const o = await findOrg(given);
    if (!o) fail(`unknown org '${given}'`);
    return { id: o.id, slug: o.slug };
  }
  const key = process.env.SERVICE_API_KEY;
  if (key) {
    const k = await ApiKey.findOne({ where: { keyHash: sha256Hex(key.trim()), revokedAt: null } });
    if (!k) fail('SERVICE_API_KEY is not an active inference key');
    const o = await findOrg(k.orgId);
    return { id: k.orgId, slug: o?.slug ?? k.orgId };
  }
  return fail('which organization? pass --org <id|slug>, or set SERVICE_ORG, or SERVICE_API_KEY (an inference key of the org)');
}

function cliWrite(redis: RedisClient, what: string): SettingsWrite {
  const label = process.env.USER ? `cli:${process.env.USER}` : 'cli';
  return { redis, actor: { type: 'cli', id: null, label }, via: { method: 'CLI', path: what } };
}

async function run<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApiError) fail(`${err.code}: ${err.message}`);
    throw err;
  }
}

/** The key from `--api-key`, else SERVICE_SEARCH_API_KEY, else a prompt that does not echo. */
async function keyInput(opt: string | undefined, provider: string): Promise<string> {
  const given = opt ?? process.env.SERVICE_SEARCH_API_KEY;
  if (given) return given;
  if (!process.stdin.isTTY) fail('no key: pass --api-key, set SERVICE_SEARCH_API_KEY, or run in a terminal to be prompted');
  return read({ prompt: `${provider} API key: `, silent: true, replace: '' });
}

const orgOption = ['--org <org>', 'org id or slug (else SERVICE_ORG, else the org of SERVICE_API_KEY)'] as const;

/**
 * `gateway search-keys list | set --provider <p> | remove <p>`: the org's own search provider keys.
 * `gateway search overage|member|bill`: the org's paid overage, member caps and switches, billing line.
 */
export function registerSearch(program: Command): void {
  const keys = program.command('search-keys').description("an organization's own web search provider keys (encrypted at rest, never shown)");
  keys
    .command('list')
    .description("list the org's own search provider keys (last 4 characters only)")
    .option(...orgOption)
    .action((opts: { org?: string }) =>
      withServices(async (redis) => {
        const org = await actingOrg(opts.org);
        const rows = await listOrgSearchKeys(org.id);
        if (!rows.length) console.log(`no own search keys for org ${org.slug}`);
        for (const r of rows) console.log(`${r.provider.padEnd(16)} …${r.last4}  ${r.created_at}`);
      }),
    );
  keys
    .command('set')
    .description("set the org's own key for a search provider (stored encrypted)")
    .requiredOption('--provider <provider>', 'the provider key, e.g. brave, tavily, exa')
    .option('--api-key <key>', 'the key (else SERVICE_SEARCH_API_KEY, else a prompt without echo)')
    .option(...orgOption)
    .action((opts: { provider: string; apiKey?: string; org?: string }) =>
      withServices(async (redis) => {
        const org = await actingOrg(opts.org);
        const key = await keyInput(opts.apiKey, opts.provider);
        const r = await run(() => setOrgSearchKey(org.id, opts.provider, key, cliWrite(redis, 'search-keys set')));
        console.log(`${r.provider}: key …${r.last4} set for org ${org.slug}`);
      }),
    );
  keys
    .command('remove <provider>')
    .description("remove the org's own key for a search provider")
    .option(...orgOption)
    .action((provider: string, opts: { org?: string }) =>
      withServices(async (redis) => {
        const org = await actingOrg(opts.org);
        if (!(await run(() => removeOrgSearchKey(org.id, provider, cliWrite(redis, 'search-keys remove'))))) fail(`no own key for '${provider}' in org ${org.slug}`);
        console.log(`${provider}: own key removed for org ${org.slug}`);
      }),
    );

  const s = program.command('search').description("an organization's web search controls");
  s.command('overage <on|off>')
    .description('switch paid search overage on (with a monthly --limit) or off')
    .option('--limit <n>', 'monthly limit on all searches (needed to turn overage on)')
    .option(...orgOption)
    .action((state: string, opts: { limit?: string; org?: string }) =>
      withServices(async (redis) => {
        if (state !== 'on' && state !== 'off') fail("say 'on' or 'off'");
        const org = await actingOrg(opts.org);
        const limit = opts.limit === undefined ? undefined : Number(opts.limit);
        if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) fail('--limit must be a whole number');
        const row = await run(() => setOverage(org.id, { enabled: state === 'on', monthlyLimit: limit }, cliWrite(redis, 'search overage')));
        console.log(`org ${org.slug}: paid overage ${row.overageEnabled ? 'on' : 'off'}, monthly limit ${row.overageMonthlyLimit ?? 'none'}`);
      }),
    );
  s.command('member <email>')
    .description("set a member's monthly search cap and switch")
    .option('--cap <n|none>', "the member's monthly cap; 'none' inherits the org limit")
    .option('--on', 'switch web search on for the member')
    .option('--off', 'switch web search off for the member')
    .option(...orgOption)
    .action((email: string, opts: { cap?: string; on?: boolean; off?: boolean; org?: string }) =>
      withServices(async (redis) => {
        const org = await actingOrg(opts.org);
        const u = await User.findOne({ where: { email, deletedAt: null } });
        if (!u || !(await Membership.findOne({ where: { orgId: org.id, userId: u.id } }))) fail(`'${email}' is not a member of org ${org.slug}`);
        if (opts.on && opts.off) fail('--on or --off, not both');
        let cap: number | null | undefined;
        if (opts.cap !== undefined) {
          cap = opts.cap === 'none' ? null : Number(opts.cap);
          if (cap !== null && (!Number.isInteger(cap) || cap < 0)) fail("--cap must be a whole number or 'none'");
        }
        const enabled = opts.on ? true : opts.off ? false : undefined;
        if (cap === undefined && enabled === undefined) fail('nothing to change: give --cap, --on or --off');
        const m = await run(() => setMemberSearch(org.id, u.id, { cap, enabled }, cliWrite(redis, 'search member')));
        console.log(`${email} in ${org.slug}: search ${m.searchEnabled ? 'on' : 'off'}, cap ${m.searchCap ?? 'inherits the org limit'}`);
      }),
    );
  s.command('bill')
    .description("print the org's search billing line for a month (JSON)")
    .option('--period <yyyy-mm>', 'the month (default: this one)')
    .option(...orgOption)
    .action((opts: { period?: string; org?: string }) =>
      withServices(async (redis) => {
        const org = await actingOrg(opts.org);
        if (opts.period && !/^\d{4}-(0[1-9]|1[0-2])$/.test(opts.period)) fail('--period is YYYY-MM');
        console.log(JSON.stringify(await searchBillingLine(org.id, opts.period ?? periodOf()), null, 2));
      }),
    );
}
