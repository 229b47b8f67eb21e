import type { Request, Response, NextFunction } from 'express';
import { Membership, Organization, User } from '../../shared/db/models';
import { ApiError } from '../../shared/errors/ApiError';
import { findOrg } from '../../shared/tenancy/ops';
import { sessionHolds } from '../web/session';

export interface DashboardViewer {
  user: User;
  /** Impersonation: the admin behind the session; such a session cannot create keys or set passwords. */
  impersonatedBy?: { adminId: string; adminEmail: string; until: number };
}

export interface OrgAccess {
  org: Organization;
  role: 'owner' | 'member';
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      viewer?: DashboardViewer;
      access?: OrgAccess;
    }
  }
}

/** Signed-in pages: a live user in the session, else off to the sign-in page; an ended impersonation signs out. */
export async function requireViewer(req: Request, res: Response, next: NextFunction): Promise<void> {
  const session = req.session as typeof req.session | undefined; // none when the cookie's path does not match
  const imp = session?.impersonatedBy;
  const user = session?.userId ? await User.findOne({ where: { id: session.userId, deletedAt: null } }) : null;
  // a session begun before the user's current password (a reset, set-password) no longer holds, nor an
  // impersonation whose admin is no longer a live platform admin (demoted or deleted since)
  const admin = user && imp ? await User.findOne({ where: { id: imp.adminId, deletedAt: null, isPlatformAdmin: true } }) : null;
  if (!user || !sessionHolds(session!, user) || (imp && (imp.until < Date.now() || !admin))) {
    if (session?.userId) await new Promise<void>((r) => session.destroy(() => r()));
    return res.redirect(303, `/dashboard/sign-in`);
  }
  res.locals.viewer = { user, impersonatedBy: imp };
  next();
}

/** The orgs a user belongs to, with the role in each. */
export async function membershipsOf(userId: string): Promise<OrgAccess[]> {
  const ms = await Membership.findAll({ where: { userId } });
  const orgs = await Organization.findAll({ where: { id: ms.map((m) => m.orgId) }, order: [['name', 'ASC']] });
  return orgs.map((org) => ({ org, role: ms.find((m) => m.orgId === org.id)!.role }));
}

/** `:org` (slug or id) must be an org the viewer belongs to: 404 otherwise (an org's existence is not revealed). */
export async function requireMember(req: Request, res: Response, next: NextFunction): Promise<void> {
  const org = await findOrg(String(req.params.org));
  const m = org ? await Membership.findOne({ where: { orgId: org.id, userId: res.locals.viewer!.user.id } }) : null;
  if (!org || !m) throw new ApiError(404, 'not_found', 'No such organization.');
  res.locals.access = { org, role: m.role };
  next();
}

export function requireOwner(_req: Request, res: Response, next: NextFunction): void {
  if (res.locals.access?.role !== 'owner') throw new ApiError(403, 'owner_required', 'Only an owner of the organization can do this.');
  next();
}

/** Impersonation sessions look, they do not create keys or change passwords. */
export function refuseImpersonation(_req: Request, res: Response, next: NextFunction): void {
  if (res.locals.viewer?.impersonatedBy) throw new ApiError(403, 'impersonation_forbidden', 'An impersonation session cannot do this.');
  next();
}
