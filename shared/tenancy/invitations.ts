import crypto from 'crypto';
import { fn, col, where, Op, UniqueConstraintError, type Transaction } from 'sequelize';
import { InviteCode, Membership, Organization, User } from '../db/models';
import { ApiError } from '../errors/ApiError';
import { hashPassword, verifyPassword, MIN_PASSWORD_LENGTH } from '../web/passwords';
import { addMember } from './kept-limits';

/** How long an invitation made on the dashboard stays redeemable. */
export const INVITE_DAYS = 7;

/** The page an invitation opens: `{base}/dashboard/invite/{code}`. */
export const invitePath = (code: string) => `/dashboard/invite/${code}`;

/**
 * An owner's (or operator's) invitation into an org: one use, `INVITE_DAYS` days, bound to the email.
 * `invitedBy`: the owner who made it; their open invitations are revoked when they stop being an
 * owner (shared/tenancy/members.ts), under the org's row lock, which this takes too: an invitation
 * made as its maker is demoted is either made first (and revoked) or refused (403 `owner_required`).
 */
export function createInvitation(orgId: string, email: string, role: 'owner' | 'member', invitedBy: string | null = null): Promise<InviteCode> {
  const values = { code: crypto.randomBytes(18).toString('base64url'), orgId, email: email.trim().toLowerCase(), role, maxUses: 1, expiresAt: new Date(Date.now() + INVITE_DAYS * 86_400_000), invitedBy };
  if (!invitedBy) return InviteCode.create(values);
  return InviteCode.sequelize!.transaction(async (transaction) => {
    await lockOrgRow(orgId, transaction);
    if (!(await Membership.findOne({ where: { orgId, userId: invitedBy, role: 'owner' }, transaction }))) throw new ApiError(403, 'owner_required', 'Only an owner of the organization can do this.');
    return InviteCode.create(values, { transaction });
  });
}

/**
 * Takes an org's row lock for the rest of `transaction`: the one lock under which invitations are made
 * and owners change or leave (members.ts), so neither slips between the other's check and write.
 */
export async function lockOrgRow(orgId: string, transaction: Transaction): Promise<void> {
  await Organization.findByPk(orgId, { transaction, lock: transaction.LOCK.UPDATE, attributes: ['id'] });
}

/** Revokes the open invitations a member made into an org (they are no longer an owner of it). */
export async function revokeInvitationsBy(orgId: string, userId: string, transaction?: Transaction): Promise<number> {
  const [n] = await InviteCode.update({ disabled: true }, { where: { orgId, invitedBy: userId, disabled: false }, transaction });
  return n;
}

/**
 * Revokes the open invitations into an org addressed to a user's email (invitations store it
 * lowercased): a member removed while a second invitation of theirs was still open (an owner who
 * invited them twice, an operator's code for their email with uses left) must not be able to walk
 * back in with it. An owner who wants them back invites them again.
 */
export async function revokeInvitationsFor(orgId: string, userId: string, transaction?: Transaction): Promise<number> {
  const u = await User.findByPk(userId, { attributes: ['email'], transaction });
  if (!u) return 0;
  const [n] = await InviteCode.update({ disabled: true }, { where: { orgId, email: u.email.trim().toLowerCase(), disabled: false }, transaction });
  return n;
}

/** Why an invitation cannot be redeemed now (revoked, expired, used up, or no such org invitation), or null. */
export function invitationRefusal(inv: InviteCode | null): ApiError | null {
  if (!inv || !inv.orgId) return new ApiError(404, 'invalid_invitation', 'This invitation link is unknown; ask the owner of the organization for a new one.');
  if (inv.disabled) return new ApiError(410, 'invitation_revoked', 'This invitation was revoked; ask the owner of the organization for a new one.');
  if (inv.expiresAt && inv.expiresAt.getTime() <= Date.now()) return new ApiError(410, 'invitation_expired', `This invitation expired on ${inv.expiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC; ask the owner of the organization for a new one.`);
  if (inv.uses >= inv.maxUses) return new ApiError(410, 'invitation_used', 'This invitation has already been used; sign in, or ask the owner of the organization for a new one.');
  return null;
}

/** A live org invitation by its code, or the refusal. */
export async function openInvitation(code: string): Promise<{ invite: InviteCode; org: Organization }> {
  const invite = /^[A-Za-z0-9_-]{4,64}$/.test(code) ? await InviteCode.findOne({ where: { code } }) : null;
  const refusal = invitationRefusal(invite);
  const org = invite?.orgId ? await Organization.findByPk(invite.orgId) : null;
  if (refusal) throw refusal;
  if (!org) throw invitationRefusal(null)!;
  return { invite: invite!, org };
}

/** A refusal of the redemption form: the page shows it next to the form, with what was typed. */
export class InvitationFormError extends Error {
  /** An existing account's password was wrong: a failed sign-in for the sign-in limits. */
  constructor(
    message: string,
    readonly wrongPassword = false,
  ) {
    super(message);
  }
}

/**
 * Redeems an invitation: a new user sets a password (an existing one proves theirs; one without a
 * password yet is refused, never given the password typed here) and joins the org
 * with the invitation's role. The use is claimed atomically (a conditional UPDATE), so an invitation
 * is never redeemed more times than `max_uses`, nor after expiry or revocation, whatever the concurrency.
 */
export async function redeemInvitation(code: string, typedEmail: string, password: string): Promise<{ user: User; org: Organization; role: 'owner' | 'member'; inviteId: string }> {
  const { invite, org } = await openInvitation(code);
  const email = (invite.email ?? typedEmail).trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 320) throw new InvitationFormError('Enter a valid email address.');
  const existing = await User.findOne({ where: { email: where(fn('lower', col('email')), email) } as never });
  if (existing?.deletedAt) throw new InvitationFormError('The account of this email was closed; ask an operator.');
  if (existing?.passwordHash) {
    if (!(await verifyPassword(password, existing.passwordHash))) throw new InvitationFormError('This email already has an account: enter its password to join.', true);
  } else if (existing) {
    // An account made by an operator (CLI, management API, console) has no password until its owner
    // uses their password link. Whoever holds an invitation must never choose it for them: that would
    // hand the account, its other organizations and any platform role to the invitation's holder.
    throw new InvitationFormError('This email already has an account that has no password yet: set it with the password link an operator gives you, then open this invitation again and enter it.');
  } else if (password.length < MIN_PASSWORD_LENGTH || password.length > 1024) {
    throw new InvitationFormError(`A password needs at least ${MIN_PASSWORD_LENGTH} characters (at most 1024).`);
  }
  if (existing && (await Membership.findOne({ where: { orgId: org.id, userId: existing.id } }))) throw new InvitationFormError(`${email} is already a member of ${org.name}; sign in instead.`);
  const hash = existing ? null : await hashPassword(password);
  const sequelize = InviteCode.sequelize!;
  // a concurrent redemption for the same email (another invitation) may create the user or the
  // membership first: the unique indexes refuse ours, the transaction (and its use) is rolled back
  const user = await sequelize.transaction(async (transaction) => {
    // the org's row lock first, as a member's removal takes it before it revokes invitations
    // (members.ts): taken after the claim (the invitation's row lock), this waited on a removal that
    // waited on the claim, and Postgres broke the deadlock by failing one side (a 500, nobody in).
    // Now the two run one after the other: a removal first revokes the invitation (410
    // invitation_revoked), a redemption first is a member the removal finds already in.
    await lockOrgRow(org.id, transaction);
    const [, claimed] = await InviteCode.update({ uses: sequelize.literal('uses + 1') as never }, {
      where: { id: invite.id, disabled: false, uses: { [Op.lt]: col('max_uses') }, [Op.or]: [{ expiresAt: null }, { expiresAt: { [Op.gt]: new Date() } }] } as never,
      returning: true,
      transaction,
    });
    if (!claimed.length) throw invitationRefusal(await InviteCode.findByPk(invite.id)) ?? invitationRefusal(null)!;
    const u = existing ?? (await User.create({ email, name: null }, { transaction }));
    if (hash) await u.update({ passwordHash: hash }, { transaction });
    await addMember(org.id, u.id, invite.role, transaction);
    return u;
  }).catch((err: unknown) => {
    if (err instanceof UniqueConstraintError) throw new InvitationFormError(`${email} has just been added to ${org.name} by another invitation; sign in instead.`);
    throw err;
  });
  return { user, org, role: invite.role, inviteId: invite.id };
}
