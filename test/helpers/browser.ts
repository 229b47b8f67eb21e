import fs from 'fs';
import path from 'path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startAdmin } from './admin';
import { buildOperator, WEB_PASSWORD } from './web-client';

/** Debian's chromium (installed by scripts/setup-browser.sh, which .ci/run calls). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = path.resolve('.data/screenshots');

export function launchBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`chromium not found at ${CHROMIUM}: run scripts/setup-browser.sh`);
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** Writes `<name>-desktop.png` (1280x800) and `<name>-phone.png` (390 wide, full page) of the page as it is. */
export async function screenshots(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-desktop.png`) });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-phone.png`), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
}

/**
 * Mocha hooks that start each test signed out (no cookies; the pages keep nothing else) on a blank
 * page at 1280x800; the answer reads the page. One context and page for the suite: a new page starts
 * a renderer, a quarter of a second per test on a quiet machine.
 */
export function pagePerTest(browser: () => Browser): () => Page {
  let ctx: BrowserContext | undefined;
  let page: Page | undefined;
  beforeEach(async () => {
    if (!page || page.isClosed()) {
      await ctx?.close();
      ctx = await browser().newContext({ viewport: { width: 1280, height: 800 } });
      page = await ctx.newPage();
    }
    await page.goto('about:blank');
    await ctx!.clearCookies();
    await page.setViewportSize({ width: 1280, height: 800 });
  });
  after(() => ctx?.close());
  return () => page!;
}

/** Signs in on a web interface's sign-in page (dashboard or console) and waits for the page it leads to. */
export async function signInAt(page: Page, url: string, email: string, password: string): Promise<void> {
  await page.goto(url);
  await page.fill('#email', email);
  await page.fill('#password', password);
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
}

/** What `consoleOperator()` sets up for a suite: filled in by its `before` hook. */
export interface ConsoleOperator {
  browser: Browser;
  /** The admin app (the operator console) on an ephemeral port. */
  admin: { url: string; close(): Promise<void> };
  /** The operator's email (a platform admin with the web password). */
  email: string;
  /** Signs `page` in on the console's sign-in page as the operator. */
  signIn(page: Page): Promise<void>;
}

/** Mocha hooks for a suite that drives the operator console in a browser: a browser, an admin app and an operator, closed after the suite. */
export function consoleOperator(): ConsoleOperator {
  const suite = {
    signIn: (page: Page) => signInAt(page, `${suite.admin.url}/sign-in`, suite.email, WEB_PASSWORD),
  } as ConsoleOperator;
  before(async () => {
    suite.browser = await launchBrowser();
    suite.admin = await startAdmin();
    suite.email = (await buildOperator()).email;
  });
  after(async () => {
    await suite.browser?.close();
    await suite.admin?.close();
  });
  return suite;
}
