import crypto from 'crypto';
import http from 'http';
import { Membership, User } from '../../shared/db/models';
import { setPassword } from '../../shared/web/passwords';
import { env } from './harness';

export interface WebReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The JSON body when the answer is JSON. */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** The CSRF token of the forms of a page (every form of a page carries the same one). */
export const csrfOf = (html: string): string => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

/**
 * One browser of the dashboard or the console, without a browser: a cookie jar, form posts that carry
 * the CSRF token of the last page seen, and optionally its own loopback source address (the sign-in
 * limiters count per client address, so a test that exhausts one uses an address of its own).
 */
export class WebClient {
  private cookies = new Map<string, string>();
  private token = '';

  constructor(
    readonly base: string,
    private readonly localAddress?: string,
  ) {}

  get csrf(): string {
    return this.token;
  }

  /** The `cookie` header this browser sends (for raw requests of its session). */
  get cookie(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(method: string, path: string, opts: { form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<WebReply> {
    const url = new URL(path, this.base);
    const body = opts.form ? new URLSearchParams(opts.form).toString() : undefined;
    const headers: Record<string, string> = { accept: 'text/html', ...(opts.headers ?? {}) };
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request(url, { method, headers, localAddress: this.localAddress, agent: false }, resolve);
      req.on('error', reject);
      req.end(body);
    });
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    for (const c of res.headers['set-cookie'] ?? []) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      this.cookies.set(pair.slice(0, i), pair.slice(i + 1));
    }
    this.token = csrfOf(text) || this.token;
    let parsed: unknown;
    if (/json/.test(String(res.headers['content-type']))) parsed = JSON.parse(text);
    return { status: res.statusCode ?? 0, headers: res.headers, text, body: parsed };
  }

  get(path: string): Promise<WebReply> {
    return this.request('GET', path);
  }

  /** Posts a form with the CSRF token of the last page (unless `_csrf` is given); JSON errors when `json`. */
  post(path: string, form: Record<string, string> = {}, opts: { json?: boolean } = {}): Promise<WebReply> {
    return this.request('POST', path, { form: { _csrf: this.token, ...form }, headers: opts.json ? { accept: 'application/json' } : {} });
  }

  /** Opens the sign-in page at `path` and signs in; the answer of the POST (303 on success). */
  async signIn(path: string, email: string, password: string): Promise<WebReply> {
    await this.get(path);
    return this.post(path, { email, password });
  }
}

export const WEB_PASSWORD = 'correct horse battery';

/** A user with the web password, a member (or owner) of the org. */
export async function buildWebMember(orgId: string, role: 'owner' | 'member'): Promise<User> {
  const u = await User.create({ email: `w-${crypto.randomBytes(5).toString('hex')}@example.com`, name: 'Web member' });
  await setPassword(u, WEB_PASSWORD);
  await Membership.create({ orgId, userId: u.id, role });
  return u;
}

/** A dashboard browser signed in as `user` (with the web password). */
export async function dashboardAs(user: User, localAddress?: string): Promise<WebClient> {
  const c = new WebClient(env().gw.url, localAddress);
  const r = await c.signIn('/dashboard/sign-in', user.email, WEB_PASSWORD);
  if (r.status !== 303) throw new Error(`sign-in of ${user.email} answered ${r.status}: ${r.text.slice(0, 200)}`);
  return c;
}

/** A fresh platform admin with the web password: an operator who can sign in to the console. */
export async function buildOperator(): Promise<User> {
  const op = await User.create({ email: `admin-${crypto.randomBytes(5).toString('hex')}@example.com`, name: 'Admin', isPlatformAdmin: true });
  await setPassword(op, WEB_PASSWORD);
  return op;
}

/** An operator console browser (at the admin process's `url`) signed in as a fresh platform admin. */
export async function consoleAs(url: string): Promise<WebClient> {
  const op = await buildOperator();
  const c = new WebClient(url);
  const r = await c.signIn('/sign-in', op.email, WEB_PASSWORD);
  if (r.status !== 303) throw new Error(`console sign-in answered ${r.status}: ${r.text.slice(0, 200)}`);
  return c;
}
