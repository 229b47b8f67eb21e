import { fn, col, where } from 'sequelize';
import { User } from '../db/models';

/** The live user with this email, compared case-insensitively (emails are stored as typed). */
export function userByEmail(email: string, opts: { platformAdmin?: boolean } = {}): Promise<User | null> {
  const e = email.trim().toLowerCase();
  if (!e) return Promise.resolve(null);
  return User.findOne({ where: { deletedAt: null, ...(opts.platformAdmin ? { isPlatformAdmin: true } : {}), email: where(fn('lower', col('email')), e) } as never });
}
