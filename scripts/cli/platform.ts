import type { Command } from 'commander';
import { User, PlatformKey } from '../../shared/db/models';
import { parseScopes } from '../../shared/platform/families';
import { createAdminToken, createPlatformKey, deleteUser, findUser, presentPlatformKey, revokePlatformKey, setPlatformAdmin } from '../../shared/platform/keys';
import type { Actor } from '../../shared/audit/audit';
import { fail, withServices } from './with-services';
import { bumpEpoch } from '../../shared/cache/epoch';
import { emailTakenBy } from '../../shared/web/sign-in-user';

/** Audit actor of a CLI action: the operator's OS user (the CLI has no login). */
const cliActor = (): Actor => ({ type: 'cli', id: null, label: `cli:${process.env.USER ?? 'operator'}` });

async function userOrFail(email: string): Promise<User> {
  const u = await findUser(email);
  if (!u) fail(`unknown user '${email}'`);
  return u;
}

/** `gateway user …`, `gateway platform-admin grant|revoke`, `gateway platform-key …`, `gateway admin-token create`. */
export function registerPlatform(program: Command): void {
  const user = program.command('user').description('users');
  user
    .command('create')
    .description('create a user (web sign-in, memberships, platform admin)')
    .requiredOption('--email <email>')
    .option('--name <name>')
    .option('--platform-admin', 'make the user a platform admin')
    .option('--json', 'print JSON')
    .action((o: { email: string; name?: string; platformAdmin?: boolean; json?: boolean }) =>
      withServices(async () => {
        if (await emailTakenBy(o.email)) fail(`a user with email '${o.email}' already exists (emails are compared case-insensitively)`);
        const u = await User.create({ email: o.email, name: o.name ?? null, isPlatformAdmin: !!o.platformAdmin });
        console.log(o.json ? JSON.stringify({ id: u.id, email: u.email, is_platform_admin: u.isPlatformAdmin }) : `created user ${u.email} (${u.id})`);
      }),
    );
  user
    .command('delete')
    .requiredOption('--user <email>')
    .description('soft-delete a user; revokes every platform key and inference key they own')
    .action((o: { user: string }) =>
      withServices(async (redis) => {
        const u = await userOrFail(o.user);
        await deleteUser(u, cliActor());
        await bumpEpoch(redis); // their inference keys die on every pod
        console.log(`deleted user ${u.email}`);
      }),
    );

  const admin = program.command('platform-admin').description('platform admin grants');
  for (const [verb, grant] of [['grant', true], ['revoke', false]] as const) {
    admin
      .command(verb)
      .description(grant ? 'make a user a platform admin' : "take platform admin away from a user (revokes the user's platform keys)")
      .requiredOption('--user <email>')
      .action((o: { user: string }) =>
        withServices(async () => {
          const u = await userOrFail(o.user);
          const done = await setPlatformAdmin(u, grant, cliActor());
          console.log(grant ? `${u.email} is a platform admin` : `${u.email} is no longer a platform admin; revoked ${done.revokedKeys} platform key(s)`);
        }),
      );
  }

  const key = program.command('platform-key').description('management keys (svc_platform_…)');
  key
    .command('create')
    .description('create a management key (svc_platform_…) with scopes, printed once')
    .requiredOption('--user <email>', 'owner: a platform admin')
    .requiredOption('--scopes <list>', 'comma-separated <family>:read|write, e.g. stats:read,users:write')
    .option('--name <name>')
    .option('--json', 'print JSON')
    .action((o: { user: string; scopes: string; name?: string; json?: boolean }) =>
      withServices(async () => {
        let scopes: string[] = [];
        try {
          scopes = parseScopes(o.scopes);
        } catch (err) {
          fail((err as Error).message);
        }
        const u = await userOrFail(o.user);
        if (!u.isPlatformAdmin) fail(`user ${u.email} is not a platform admin (gateway platform-admin grant --user ${u.email})`);
        const k = await createPlatformKey({ userId: u.id, scopes, name: o.name }, cliActor());
        if (o.json) console.log(JSON.stringify({ id: k.id, key: k.key, prefix: k.prefix, scopes: k.scopes, user_id: k.userId }));
        else console.log(`platform key ${k.id} (shown once, store it now):\n${k.key}`);
      }),
    );
  key
    .command('list')
    .description('list management keys: id, prefix, state, scopes (never the key)')
    .option('--json', 'print JSON')
    .action((o: { json?: boolean }) =>
      withServices(async () => {
        const rows = (await PlatformKey.findAll({ order: [['createdAt', 'ASC']] })).map(presentPlatformKey);
        if (o.json) return console.log(JSON.stringify(rows));
        for (const k of rows) console.log(`${k.id}  ${k.prefix}…  ${k.state.padEnd(7)}  ${k.scopes.join(',')}`);
      }),
    );
  key.command('revoke <id>').description('revoke a management key').action((id: string) =>
    withServices(async () => {
      if (!(await revokePlatformKey(id, cliActor()))) fail(`no active platform key ${id}`);
      console.log(`revoked ${id}`);
    }),
  );

  program
    .command('admin-token')
    .description("a platform admin's personal token (svc_admin_…) for /admin/v1/platform-keys and platform-admin grants")
    .command('create')
    .description("create a platform admin's personal token, printed once")
    .requiredOption('--user <email>')
    .option('--name <name>')
    .option('--json', 'print JSON')
    .action((o: { user: string; name?: string; json?: boolean }) =>
      withServices(async () => {
        const u = await userOrFail(o.user);
        if (!u.isPlatformAdmin) fail(`user ${u.email} is not a platform admin`);
        const t = await createAdminToken(u.id, o.name);
        if (o.json) console.log(JSON.stringify({ id: t.id, token: t.key, prefix: t.prefix, user_id: t.userId }));
        else console.log(`admin token ${t.id} (shown once, store it now):\n${t.key}`);
      }),
    );
}
