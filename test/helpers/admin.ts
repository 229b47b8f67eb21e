import crypto from 'crypto';
import http from 'http';
import { createAdminApp } from '../../api/admin/app';
import { expressClasses } from '../../shared/http/express-classes';
import { User } from '../../shared/db/models';
import { createAdminToken, createPlatformKey } from '../../shared/platform/keys';
import { ALL_SCOPES } from '../../shared/platform/families';
import { env } from './harness';
import { call, type Reply } from './http';

/** An admin app (`{admin_url}`) on an ephemeral port, sharing the test run's Redis and queues. */
export async function startAdmin(): Promise<{ url: string; close(): Promise<void> }> {
  const app = createAdminApp({ redis: env().redis, queues: env().gw.ctx.queues });
  const server = http.createServer(expressClasses(app), app); // as api/admin/server.ts builds it
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A fresh platform admin user. */
export async function buildPlatformAdmin(): Promise<User> {
  return User.create({ email: `admin-${crypto.randomBytes(5).toString('hex')}@example.com`, name: 'Admin', isPlatformAdmin: true });
}

/** A management key with the given scopes (default: every scope), owned by a fresh platform admin unless given. */
export async function buildPlatformKey(scopes: string[] = ALL_SCOPES, owner?: User): Promise<{ key: string; id: string; owner: User }> {
  const user = owner ?? (await buildPlatformAdmin());
  const k = await createPlatformKey({ userId: user.id, scopes }, null);
  return { key: k.key, id: k.id, owner: user };
}

export async function buildAdminToken(owner?: User): Promise<{ token: string; owner: User }> {
  const user = owner ?? (await buildPlatformAdmin());
  const t = await createAdminToken(user.id);
  return { token: t.key, owner: user };
}

export const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

/** A request to an admin app with a bearer credential. */
export function adminCall(base: string, secret: string | null, method: string, path: string, json?: unknown): Promise<Reply> {
  return call(method, path, { base, headers: secret ? bearer(secret) : {}, json });
}

/**
 * An admin app and a platform key of every scope, made before the suite's tests and closed after
 * them; `call` is adminCall with both.
 */
export function adminSuite(): { call(method: string, path: string, json?: unknown): Promise<Reply>; callAs(secret: string, method: string, path: string, json?: unknown): Promise<Reply> } {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  let key: string;
  before(async () => {
    admin = await startAdmin();
    key = (await buildPlatformKey()).key;
  });
  after(() => admin.close());
  return { call: (method, path, json) => adminCall(admin.url, key, method, path, json), callAs: (secret, method, path, json) => adminCall(admin.url, secret, method, path, json) };
}
