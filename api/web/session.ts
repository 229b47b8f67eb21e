import crypto from 'crypto';
import express, { type Request, type Response, type NextFunction, type RequestHandler } from 'express';
import session from 'express-session';
import RedisStore from 'connect-redis';
import cookieParser from 'cookie-parser';
import helmet from 'helmet';
import { doubleCsrf } from 'csrf-csrf';
import type { RedisClient } from '../../shared/redis/connection';
import { config } from '../../shared/config/env';
import { ApiError } from '../../shared/errors/ApiError';

declare module 'express-session' {
  interface SessionData {
    userId?: string;
    /** Set on an impersonation session: who opened it, and when it ends (ms). */
    impersonatedBy?: { adminId: string; adminEmail: string; until: number };
    /** The user's password when the session began (`credentialOf`): a new password ends the session. */
    credential?: string;
  }
}

/** How long a signed-out visitor's CSRF identity (a cookie, nothing in Redis) lasts. */
const VISITOR_MS = 30 * 60_000;
const VISITOR_ID = /^[A-Za-z0-9_-]{32}$/;

export interface WebKit {
  /** helmet, cookies, the Redis session, form bodies and CSRF checks on every non-GET request. */
  middleware: RequestHandler[];
  /** Only the cookies and the session (for pages of another app behind the same sign-in, e.g. bull-board). */
  sessionOnly: RequestHandler[];
  /** The CSRF token for the forms of the page being rendered. */
  csrfToken(req: Request, res: Response): string;
}

/**
 * What each web interface mounts in front of its pages. `name` keeps the dashboard's and the
 * console's cookies and Redis sessions apart (the two processes may share a host name).
 * Cookies are HttpOnly and SameSite=Lax, and Secure when the request came over TLS (directly or via
 * a proxy's X-Forwarded-Proto).
 */
export function webKit(redis: RedisClient, opts: { name: 'dashboard' | 'console'; cookiePath: string }): WebKit {
  const cfg = config();
  const secret = crypto.createHmac('sha256', cfg.secretKey).update(`web:${opts.name}`).digest('hex');
  // A signed-out visitor's forms are bound to a random cookie of its own, not to a session: a page
  // view by someone not signed in writes nothing to Redis (a flood of sign-in page views stores nothing).
  const visitorCookie = `gw_${opts.name}_visitor`;
  const visitorOf = (req: Request): string => {
    const v = (req.cookies as Record<string, unknown> | undefined)?.[visitorCookie];
    return typeof v === 'string' && VISITOR_ID.test(v) ? v : '';
  };
  const csrf = doubleCsrf({
    getSecret: () => secret,
    getSessionIdentifier: (req) => (req.session?.userId ? req.session.id : `visitor:${visitorOf(req)}`),
    cookieName: `gw_${opts.name}_csrf`,
    cookieOptions: { sameSite: 'lax', path: opts.cookiePath, secure: false, httpOnly: true },
    getCsrfTokenFromRequest: (req) => (req.body as Record<string, unknown> | undefined)?._csrf as string | undefined,
  });
  const csrfCheck: RequestHandler = (req, res, next) =>
    csrf.doubleCsrfProtection(req, res, (err?: unknown) =>
      next(err ? new ApiError(403, 'invalid_csrf_token', 'The form was sent without a valid CSRF token; reload the page and try again.') : undefined),
    );
  const sessionOnly: RequestHandler[] = [
    cookieParser(),
    session({
      name: `gw_${opts.name}`,
      store: new RedisStore({ client: redis, prefix: `${cfg.redisPrefix}:web:session:${opts.name}:` }),
      secret,
      resave: false,
      saveUninitialized: false,
      rolling: false,
      proxy: true,
      cookie: { httpOnly: true, sameSite: 'lax', secure: 'auto', path: opts.cookiePath, maxAge: cfg.webSessionHours * 3_600_000 },
    }),
  ];
  const middleware: RequestHandler[] = [
    helmet({ contentSecurityPolicy: { directives: { 'script-src': ["'self'"], 'style-src': ["'self'"], 'img-src': ["'self'", 'data:'], 'form-action': ["'self'"] } } }),
    // no page is kept by a browser or a proxy: some show a secret once (a new key, an invitation link)
    (_req, res, next) => {
      res.setHeader('Cache-Control', 'no-store');
      next();
    },
    ...sessionOnly,
    express.urlencoded({ extended: false, limit: '64kb' }),
    csrfCheck,
  ];
  return {
    middleware,
    sessionOnly,
    csrfToken(req, res) {
      const secure = req.secure || req.get('x-forwarded-proto') === 'https';
      if (!req.session.userId && !visitorOf(req)) {
        const id = crypto.randomBytes(24).toString('base64url');
        res.cookie(visitorCookie, id, { httpOnly: true, sameSite: 'lax', path: opts.cookiePath, secure, maxAge: VISITOR_MS });
        (req.cookies as Record<string, string>)[visitorCookie] = id; // the token below is bound to it
      }
      return csrf.generateCsrfToken(req, res, { cookieOptions: { secure } });
    },
  };
}

/** Who signs in: the user's id and stored password hash (null: none). */
export interface SessionUser {
  id: string;
  passwordHash: string | null;
}

/**
 * What a session keeps of its user's password: a keyed digest of the stored hash (never the hash
 * itself). Any new password (a password link, `gateway user set-password`) changes it, so every
 * session begun before it no longer holds (`sessionHolds`).
 */
const credentialOf = (user: SessionUser) =>
  crypto.createHmac('sha256', config().secretKey).update(`web:credential:${user.id}:${user.passwordHash ?? ''}`).digest('base64url');

/** Whether a session of `user` was begun with the password the user has now. */
export const sessionHolds = (session: { credential?: string }, user: SessionUser): boolean => session.credential === credentialOf(user);

/** Regenerates the session id on sign-in (no fixation) and stores who signed in, with their password's digest. */
export function signIn(req: Request, user: SessionUser, extra: Partial<import('express-session').SessionData> = {}): Promise<void> {
  return new Promise((resolve, reject) =>
    req.session.regenerate((err) => {
      if (err) return reject(err);
      req.session.userId = user.id;
      req.session.credential = credentialOf(user);
      Object.assign(req.session, extra);
      req.session.save((e) => (e ? reject(e) : resolve()));
    }),
  );
}

export function signOut(req: Request): Promise<void> {
  return new Promise((resolve) => req.session.destroy(() => resolve()));
}

export type PageHandler = (req: Request, res: Response, next: NextFunction) => unknown;
