import type { Request, Response } from 'express';
import type { Actor } from '../../shared/audit/audit';
import type { Html } from '../web/html';
import { page } from '../web/layout';
import { merged } from '../../shared/merged';
import type { WebKit } from '../web/session';
import type { SignedInChrome } from '../web/error-page';

/** Renders a page of one organization in its chrome (orgChrome). */
export function renderOrgPage(req: Request, res: Response, kit: WebKit, title: string, tab: string, body: (csrf: string) => Html): void {
  const c = orgChrome(req, res, kit, tab);
  res.send(page(merged(c, { title, base: '/dashboard' }), body(c.csrf!)));
}

/** An organization's tabs (Web search and Members for owners only), its name, the user and the impersonation banner. */
export function orgChrome(req: Request, res: Response, kit: WebKit, tab: string): SignedInChrome {
  const { viewer, access } = res.locals;
  const base = `/dashboard/o/${access!.org.slug}`;
  const csrf = kit.csrfToken(req, res);
  const imp = viewer!.impersonatedBy;
  const nav = [
    { href: base, label: 'Usage', on: tab === 'usage' },
    { href: `${base}/activity`, label: 'Activity', on: tab === 'activity' },
    { href: `${base}/models`, label: 'Models', on: tab === 'models' },
    { href: `${base}/keys`, label: 'API keys', on: tab === 'keys' },
    { href: `${base}/projects`, label: 'Projects', on: tab === 'projects' },
    ...(access!.role === 'owner' ? [{ href: `${base}/search`, label: 'Web search', on: tab === 'search' }] : []),
    ...(access!.role === 'owner' ? [{ href: `${base}/members`, label: 'Members', on: tab === 'members' }] : []),
  ];
  const banner = imp
    ? `Impersonation: ${imp.adminEmail} is viewing as ${viewer!.user.email} until ${new Date(imp.until).toISOString().slice(11, 16)} UTC. Key creation, web search settings and password changes are disabled.`
    : undefined;
  return { brand: access!.org.name, user: viewer!.user.email, csrf, banner, nav };
}

/** The audit actor of a dashboard write: the user, or the admin behind an impersonation. */
export function actorOf(res: Response): Actor {
  const v = res.locals.viewer!;
  return { type: 'web_session', id: v.impersonatedBy?.adminId ?? v.user.id, label: v.impersonatedBy ? `${v.impersonatedBy.adminEmail} as ${v.user.email}` : v.user.email };
}
