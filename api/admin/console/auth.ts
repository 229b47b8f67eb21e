import { Router, type Request, type Response, type NextFunction } from 'express';
import type { RedisClient } from '../../../shared/redis/connection';
import { User } from '../../../shared/db/models';
import type { Actor } from '../../../shared/audit/audit';
import { verifyPassword } from '../../../shared/web/passwords';
import { userByEmail } from '../../../shared/web/sign-in-user';
import { page, signInForm } from '../../web/layout';
import { sessionHolds, signIn, signOut, type WebKit } from '../../web/session';
import { signInLimit } from '../../web/sign-in-limit';
import { refuseOnPage, wrongSignIn } from '../../web/page-refusal';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      operator?: User;
    }
  }
}

/** A live platform admin's session, or null. */
export async function operatorOf(req: Request): Promise<User | null> {
  if (!req.session?.userId || req.session.impersonatedBy) return null;
  const user = await User.findOne({ where: { id: req.session.userId, deletedAt: null, isPlatformAdmin: true } });
  return user && sessionHolds(req.session, user) ? user : null; // not a session begun before a new password
}

/** Console pages need a platform admin's session; otherwise the sign-in page. */
export async function requireOperator(req: Request, res: Response, next: NextFunction): Promise<void> {
  const op = await operatorOf(req);
  if (!op) return res.redirect(303, '/sign-in');
  res.locals.operator = op;
  next();
}

export const operatorActor = (res: Response): Actor => ({ type: 'web_session', id: res.locals.operator!.id, label: res.locals.operator!.email });

const chrome = { title: 'Sign in', base: '', brand: 'Gateway operator console' };

/** The console's sign-in and sign-out: platform admins only (anyone else gets the same wrong-password answer). */
export function consoleAuthRoutes(redis: RedisClient, kit: WebKit): Router {
  const r = Router();
  r.get('/sign-in', (req, res) => void res.send(page(chrome, signInForm({ action: '/sign-in', csrf: kit.csrfToken(req, res), heading: 'Operator sign-in' }))));
  r.post('/sign-in', ...signInLimit(redis, 'console'), async (req, res) => {
    const email = String(req.body?.email ?? '').trim().toLowerCase();
    const user = await userByEmail(email, { platformAdmin: true });
    if (!(await verifyPassword(String(req.body?.password ?? ''), user?.passwordHash ?? null)) || !user) {
      return refuseOnPage(req, res, wrongSignIn(), (error) => page(chrome, signInForm({ action: '/sign-in', csrf: kit.csrfToken(req, res), heading: 'Operator sign-in', error, email })));
    }
    await signIn(req, user);
    res.redirect(303, '/');
  });
  r.post('/sign-out', async (req, res) => {
    await signOut(req);
    res.redirect(303, '/sign-in');
  });
  return r;
}
