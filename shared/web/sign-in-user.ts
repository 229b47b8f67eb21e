import { fn, col, where } from 'sequelize';
import { User } from '../db/models';

/**
 * The live user with this email, compared case-insensitively (emails are stored as typed);
 * `includeDeleted`: a deleted one as well (whether an email is taken).
 */
export function userByEmail(email: string, opts: { platformAdmin?: boolean; includeDeleted?: boolean } = {}): Promise<User | null> {
  const e = email.trim().toLowerCase();
  if (!e) return Promise.resolve(null);
  return User.findOne({ where: { ...(opts.includeDeleted ? {} : { deletedAt: null }), ...(opts.platformAdmin ? { isPlatformAdmin: true } : {}), email: where(fn('lower', col('email')), e) } as never });
}

/**
 * The user who already has this email in another letter case (deleted users included, as the
 * unique index counts them): sign-in and invitations look emails up case-insensitively, so a second
 * `Bob@x.com` beside `bob@x.com` would make either account the one found.
 */
export async function emailTakenBy(email: string, self?: string): Promise<User | null> {
  const other = await userByEmail(email, { includeDeleted: true });
  return other && other.id !== self ? other : null;
}
