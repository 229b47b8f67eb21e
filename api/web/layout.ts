import { html, type Html } from './html';

export interface PageChrome {
  title: string;
  /** Where the interface lives (`/dashboard` or ``), for the stylesheet and the sign-out form. */
  base: string;
  brand: string;
  nav?: Array<{ href: string; label: string; on?: boolean }>;
  /** Signed-in user's email; absent on the sign-in pages. */
  user?: string;
  csrf?: string;
  /** Shown on every page of an impersonation session. */
  banner?: string;
}

/**
 * The page shell shared by the dashboard and the console. Its first focusable element is a "Skip to
 * content" link (hidden until focused) past the header's navigation to `<main>`, which takes the focus
 * (tabindex -1), so the next Tab goes on from there (WCAG 2.4.1 Bypass Blocks).
 */
export function page(c: PageChrome, body: Html): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${c.title} · ${c.brand}</title><link rel="stylesheet" href="${c.base}/assets/style.css"></head>
<body><a class="skip" href="#main">Skip to content</a>${c.banner ? html`<div class="banner" role="alert" data-test="impersonation-banner">${c.banner}</div>` : ''}
<header><span class="brand">${c.brand}</span>
${(c.nav ?? []).map((n) => html`<a href="${n.href}" class="${n.on ? 'on' : ''}">${n.label}</a>`)}
${c.user ? html`<span class="who"><span class="muted">${c.user}</span><form method="post" action="${c.base}/sign-out"><input type="hidden" name="_csrf" value="${c.csrf ?? ''}"><button>Sign out</button></form></span>` : ''}
</header>
<main id="main" tabindex="-1">${body}</main></body></html>`.value;
}

/** The sign-in form of either interface. */
export function signInForm(opts: { action: string; csrf: string; error?: string; email?: string; heading: string }): Html {
  return html`<div class="signin card"><h1>${opts.heading}</h1>
${opts.error ? html`<p class="error" role="alert">${opts.error}</p>` : ''}
<form method="post" action="${opts.action}"><input type="hidden" name="_csrf" value="${opts.csrf}">
<label for="email">Email</label><input type="email" id="email" name="email" autocomplete="username" required value="${opts.email ?? ''}">
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>
<p><button type="submit">Sign in</button></p></form></div>`;
}
