import { Op, type Transaction } from 'sequelize';
import type { RedisClient } from '../redis/connection';
import { ApiKey, Membership, User } from '../db/models';
import { ApiError } from '../errors/ApiError';
import { bumpEpoch } from '../cache/epoch';
import { recordAudit, type Actor } from '../audit/audit';
import type { MemberLimitsRow } from '../limits/key-input';
import { isUuid } from '../uuid';
import { lockOrgRow, revokeInvitationsBy, revokeInvitationsFor } from './invitations';
import { keepLimitsOf } from './kept-limits';

/**
 * Who an API key belongs to. A key made by a member is that member's (their search switch and cap,
 * their tool policy, their departure apply to it); an org-wide key (no user) is made only by an owner
 * who asks for one, or by an operator (`gateway key create` without `--user`).
 */
export function keyOwnerFor(viewer: { userId: string; role: 'owner' | 'member' }, orgWide: boolean): { userId: string | null } | { refused: string } {
  if (!orgWide) return { userId: viewer.userId };
  if (viewer.role !== 'owner') return { refused: 'Only an owner can create an organization-wide key; a key you create is yours.' };
  return { userId: null };
}

/**
 * The key's member as its cached entry needs it: `gone` when the user is gone from the org (no
 * membership, or a deleted user: such a key no longer authenticates), else their membership (whose
 * limits apply to the key). An org-wide key (no user): neither.
 */
export async function keyMember(orgId: string, userId: string | null): Promise<{ gone: boolean; membership: Membership | null }> {
  if (!userId) return { gone: false, membership: null };
  const [m, u] = await Promise.all([Membership.findOne({ where: { orgId, userId } }), User.findOne({ where: { id: userId, deletedAt: null } })]);
  return !m || !u ? { gone: true, membership: null } : { gone: false, membership: m };
}

/** Revokes a user's active keys (in one org, or everywhere); the caller bumps the cache epoch. */
export async function revokeKeysOf(userId: string, orgId?: string, transaction?: Transaction): Promise<number> {
  const [n] = await ApiKey.update({ revokedAt: new Date() }, { where: { userId, revokedAt: { [Op.is]: null }, ...(orgId ? { orgId } : {}) }, transaction });
  return n;
}

/**
 * Removes a member from an org: the membership goes, the member's keys in that org are revoked
 * (they stay revoked if the user joins again) and so are the open invitations they made into it and
 * those addressed to them (a second invitation is no way back in),
 * then the cache epoch moves so every pod refuses the keys on its next request. `removed` is false when the user was not a member. Audited when `audit` is
 * given (the management API audits its own requests).
 */
export async function removeMember(redis: RedisClient, orgId: string, userId: string, audit?: { actor: Actor; path: string }, opts: { keepAnOwner?: boolean } = {}): Promise<{ removed: boolean; revokedKeys: number }> {
  // under the org's row lock with the member's invitations (an invitation made at the same instant is
  // revoked with them or refused); an operator's removal may leave the org without an owner
  const done = await changeMember(orgId, userId, null, !!opts.keepAnOwner).then(
    (c) => ({ removed: true, revokedKeys: c.revokedKeys }),
    (err: unknown) => {
      if (!opts.keepAnOwner && err instanceof ApiError && err.status === 404) return { removed: false, revokedKeys: 0 };
      throw err;
    },
  );
  const { removed, revokedKeys } = done;
  await bumpEpoch(redis);
  if (audit) await recordAudit({ actor: audit.actor, method: 'DELETE', path: audit.path, family: 'organizations', targetId: `${orgId}/${userId}`, status: removed ? 200 : 404, fields: removed ? [`revoked_keys:${revokedKeys}`] : [] });
  return { removed, revokedKeys };
}

/**
 * Gives a member of an org the role `next`, or removes them (null), refusing to leave the org without
 * an owner: 404 `not_found` (not a member), 409 `last_owner`. The check and the change are one
 * transaction holding the org's row lock, so two owners demoting or removing each other at once are
 * serialized: the second sees one owner left and is refused (a count outside the lock let both pass,
 * leaving no owner). The dashboard's members page uses it; the caller bumps the cache epoch.
 */
export async function changeMemberKeepingAnOwner(orgId: string, userId: string, next: 'owner' | 'member' | null): Promise<Membership> {
  return (await changeMember(orgId, userId, next, true)).m;
}

/**
 * changeMemberKeepingAnOwner, the last-owner refusal only when `keepAnOwner` (an operator's removal may
 * leave none). A removal keeps what the owner set on the member (keepLimitsOf) and revokes the member's
 * keys in the org in the same transaction, under the org's row lock: a key the member makes meanwhile
 * (createApiKey takes that lock too) is either made first and revoked here, or refused as not a
 * member's, never left active to come back when the member is added back.
 */
function changeMember(orgId: string, userId: string, next: 'owner' | 'member' | null, keepAnOwner: boolean): Promise<{ m: Membership; revokedKeys: number }> {
  return Membership.sequelize!.transaction(async (transaction) => {
    await lockOrgRow(orgId, transaction);
    const m = isUuid(userId) ? await Membership.findOne({ where: { orgId, userId }, transaction }) : null;
    if (!m) throw new ApiError(404, 'not_found', 'No such member in this organization.');
    if (keepAnOwner && m.role === 'owner' && next !== 'owner' && (await Membership.count({ where: { orgId, role: 'owner' }, transaction })) <= 1) {
      throw new ApiError(409, 'last_owner', 'An organization keeps at least one owner: make someone else an owner first.');
    }
    let revokedKeys = 0;
    if (next === null) {
      await keepLimitsOf(m, transaction);
      await m.destroy({ transaction });
      revokedKeys = await revokeKeysOf(userId, orgId, transaction);
      await revokeInvitationsFor(orgId, userId, transaction);
    } else await m.update({ role: next }, { transaction });
    // no longer an owner here: the invitations they made (some perhaps for themselves) go too
    if (next !== 'owner') await revokeInvitationsBy(orgId, userId, transaction);
    return { m, revokedKeys };
  });
}

/**
 * Sets an owner's limits on a member of an org (only the fields given; docs/keys.md "Member
 * limits"); every pod applies them to all the member's keys from its next request (the epoch moves,
 * and a key's cached entry carries its member's limits). Null when the user is not a member.
 */
export async function updateMemberLimits(redis: RedisClient, orgId: string, userId: string, limits: MemberLimitsRow): Promise<Membership | null> {
  const m = isUuid(userId) ? await Membership.findOne({ where: { orgId, userId } }) : null;
  if (!m) return null;
  await m.update(limits);
  await bumpEpoch(redis);
  return m;
}
