import { Op } from 'sequelize';
import { AdminToken, PlatformKey, User } from '../db/models';
import { generateApiKey, PLATFORM_PREFIX } from '../auth/apiKeys';
import { sha256Hex } from '../crypto';
import { recordAudit, type Actor } from '../audit/audit';
import { isUuid } from '../uuid';
import { userByEmail } from '../web/sign-in-user';
import { revokeKeysOf } from '../tenancy/members';

/** Prefix of a platform admin's personal token; it opens only the platform-admin paths. */
export const ADMIN_TOKEN_PREFIX = 'svc_admin_';

export type RevokeReason = 'revoked' | 'owner_demoted' | 'owner_deleted';

export interface CreatedSecret {
  id: string;
  /** The raw key: shown once, never stored. */
  key: string;
  prefix: string;
  userId: string;
}

export class PlatformError extends Error {}

async function activeAdmin(userId: string): Promise<User> {
  const user = await User.findByPk(userId);
  if (!user || user.deletedAt) throw new PlatformError(`unknown user ${userId}`);
  if (!user.isPlatformAdmin) throw new PlatformError(`user ${user.email} is not a platform admin`);
  return user;
}

/** Finds a live user by id, or by email compared case-insensitively (as sign-in does; one user per email). */
export async function findUser(emailOrId: string): Promise<User | null> {
  return isUuid(emailOrId) ? User.findOne({ where: { deletedAt: null, id: emailOrId } }) : userByEmail(emailOrId);
}

/** Creates a platform key owned by a platform admin. Audited here when an actor is given (the API audits its own requests). */
export async function createPlatformKey(
  input: { userId: string; scopes: string[]; name?: string | null },
  actor: Actor | null,
): Promise<CreatedSecret & { scopes: string[]; row: PlatformKey }> {
  await activeAdmin(input.userId);
  const g = generateApiKey(PLATFORM_PREFIX);
  const row = await PlatformKey.create({ userId: input.userId, name: input.name ?? null, prefix: g.visiblePrefix, keyHash: g.hash, scopes: input.scopes, revokedAt: null, revokedReason: null, lastUsedAt: null });
  if (actor) await recordAudit({ actor, method: 'POST', path: '/admin/v1/platform-keys', family: 'platform-keys', targetId: row.id, status: 201, fields: ['name', 'scopes', 'user_id'] });
  return { id: row.id, key: g.raw, prefix: g.visiblePrefix, userId: row.userId, scopes: row.scopes, row };
}

/** Revokes one platform key; true when it was active. Audited when an actor is given. */
export async function revokePlatformKey(id: string, actor: Actor | null, reason: RevokeReason = 'revoked'): Promise<boolean> {
  if (!isUuid(id)) return false;
  const [n] = await PlatformKey.update({ revokedAt: new Date(), revokedReason: reason }, { where: { id, revokedAt: null } });
  if (actor) await recordAudit({ actor, method: 'DELETE', path: `/admin/v1/platform-keys/${id}`, family: 'platform-keys', targetId: id, status: n ? 200 : 404 });
  return n > 0;
}

/** Creates a platform admin's personal admin token. */
export async function createAdminToken(userId: string, name?: string | null): Promise<CreatedSecret> {
  await activeAdmin(userId);
  const g = generateApiKey(ADMIN_TOKEN_PREFIX);
  const row = await AdminToken.create({ userId, name: name ?? null, prefix: g.visiblePrefix, keyHash: g.hash, revokedAt: null, revokedReason: null, lastUsedAt: null });
  return { id: row.id, key: g.raw, prefix: g.visiblePrefix, userId };
}

/** Revokes every platform key and admin token a user owns (demotion, deletion); each key revocation is audited. */
async function revokeAllOf(userId: string, reason: RevokeReason, actor: Actor | null): Promise<number> {
  const values = { revokedAt: new Date(), revokedReason: reason };
  const where = { userId, revokedAt: null };
  const [, keys] = await PlatformKey.update(values, { where, returning: true });
  await AdminToken.update(values, { where });
  for (const k of keys) {
    await recordAudit({ actor: actor ?? SYSTEM, method: 'DELETE', path: `/admin/v1/platform-keys/${k.id}`, family: 'platform-keys', targetId: k.id, status: 200, fields: [`revoked_reason:${reason}`] });
  }
  return keys.length;
}

const SYSTEM: Actor = { type: 'cli', id: null, label: 'system' };

/** Grants or revokes platform admin of a live user (as `findUser` gives it); a demotion revokes the user's keys and tokens at once. */
export async function setPlatformAdmin(user: User, isAdmin: boolean, actor: Actor | null): Promise<{ user: User; revokedKeys: number }> {
  await user.update({ isPlatformAdmin: isAdmin });
  const revokedKeys = isAdmin ? 0 : await revokeAllOf(user.id, 'owner_demoted', actor);
  return { user, revokedKeys };
}

/**
 * Soft-deletes a live user (as `findUser` gives it) and revokes everything they own, their inference
 * keys in every org included. The caller bumps the cache epoch so every pod refuses those keys.
 */
export async function deleteUser(user: User, actor: Actor | null): Promise<void> {
  await user.update({ deletedAt: new Date(), isPlatformAdmin: false });
  await revokeAllOf(user.id, 'owner_deleted', actor);
  await revokeKeysOf(user.id);
}

export interface PlatformPrincipal {
  kind: 'platform_key' | 'admin_token';
  id: string;
  prefix: string;
  user: { id: string; email: string };
  scopes: string[];
}

/**
 * Looks the credential up in Postgres on every request: no cache, so a revocation, a demotion or a
 * deletion is seen by every admin pod on its very next request. The owner is re-checked each time.
 */
export async function authenticateSecret(raw: string): Promise<PlatformPrincipal | null> {
  const kind = raw.startsWith(PLATFORM_PREFIX) ? 'platform_key' : raw.startsWith(ADMIN_TOKEN_PREFIX) ? 'admin_token' : null;
  if (!kind || !/^svc_[a-z]+_[0-9A-Za-z]{20,128}$/.test(raw)) return null;
  const where = { keyHash: sha256Hex(raw), revokedAt: { [Op.is]: null } };
  const row = kind === 'platform_key' ? await PlatformKey.findOne({ where }) : await AdminToken.findOne({ where });
  if (!row) return null;
  const user = await User.findByPk(row.userId);
  if (!user || user.deletedAt || !user.isPlatformAdmin) return null;
  return { kind, id: row.id, prefix: row.prefix, user: { id: user.id, email: user.email }, scopes: row instanceof PlatformKey ? row.scopes : [] };
}

/** What a platform key looks like to a platform admin (never its hash). */
export function presentPlatformKey(k: PlatformKey) {
  return {
    id: k.id,
    object: 'platform_key',
    name: k.name,
    prefix: k.prefix,
    user_id: k.userId,
    scopes: k.scopes,
    state: k.revokedAt ? 'revoked' : 'active',
    revoked_at: k.revokedAt,
    revoked_reason: k.revokedReason,
    created_at: k.createdAt,
  };
}
