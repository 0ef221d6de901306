// Browser tests of the operator console: Debian's Chromium (/usr/bin/chromium;
// .ci/run installs it) driven by playwright-core, which cannot download its
// own browsers here. One browser per test file, a fresh context (own
// sessionStorage) per test; sign-in goes through the real form; axe-core
// checks a page and fails on serious or critical violations.
import { AxeBuilder } from '@axe-core/playwright';
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export interface TestBrowser {
  /** A new context (cookies, storage) with one page, on the service's origin; `options` such as a `locale` for it. */
  page(options?: BrowserContextOptions): Promise<Page>;
  close(): Promise<void>;
}

/**
 * Launches headless Chromium. playwright-core gives it a fresh user-data dir of its own
 * (a temporary profile, removed on close); each page() is a new incognito-like context,
 * so tests do not share sessionStorage.
 */
export async function launchBrowser(baseURL: string): Promise<TestBrowser> {
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  const contexts: BrowserContext[] = [];
  return {
    async page(options = {}) {
      const context = await browser.newContext({ ...options, baseURL });
      contexts.push(context);
      const page = await context.newPage();
      page.setDefaultTimeout(30_000); // under a loaded CI machine; every wait is for an element or a request
      return page;
    },
    async close() {
      // A test's page stays open to the end of its file and keeps polling; a route handler still fetching the
      // real answer when its context closes would reject ("Response has been disposed") after the tests passed.
      for (const c of contexts) {
        await Promise.all(c.pages().map((p) => p.unrouteAll({ behavior: 'ignoreErrors' }).catch(() => undefined)));
        await c.close().catch(() => undefined);
      }
      await browser.close();
    },
  };
}

/** Signs in through the sign-in form, as a user would, and waits for the page it leads to. */
export async function signIn(page: Page, username: string, password: string, path = '/'): Promise<void> {
  // On a sign-in page already, its `next` (an expired session's page) is kept; one Sign out left has none, so `path` is asked for.
  const here = new URL(page.url(), 'http://x');
  if (!here.pathname.startsWith('/sign-in') || (!here.searchParams.has('next') && path !== '/')) await page.goto(`/sign-in?next=${encodeURIComponent(path)}`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

export interface AxeFinding {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/** Runs axe-core on the page as it is now (WCAG 2.x A/AA rules) and fails on serious or critical violations, naming each. */
export async function expectAccessible(page: Page, what = page.url(), options: { exclude?: string[] } = {}): Promise<AxeFinding[]> {
  const builder = new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']);
  // A long list's rows past its first are left out where a test says so: the same markup, and axe takes ≈ 0.1 s a row.
  for (const selector of options.exclude ?? []) builder.exclude(selector);
  const results = await builder.analyze();
  const findings = results.violations.map((v) => ({
    id: v.id,
    impact: v.impact ?? 'unknown',
    help: v.help,
    targets: v.nodes.map((n) => n.target.join(' ')),
  }));
  const blocking = findings.filter((f) => f.impact === 'serious' || f.impact === 'critical');
  expect(
    blocking.map((f) => `${f.impact} ${f.id} (${f.help}): ${f.targets.join(', ')}`),
    `axe on ${what}`,
  ).toEqual([]);
  return findings;
}

/** The API as the console calls it, for setting up and reading back what the UI did. */
export async function api(baseURL: string, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${baseURL}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** An account made as the console makes one: invited by `adminToken` (no mail: the token comes back), then activated. */
export async function addUser(
  baseURL: string,
  adminToken: string,
  who: { email: string; name: string; role: 'superadmin' | 'admin' | 'viewer'; password: string },
): Promise<void> {
  const invite = await api(baseURL, adminToken, 'POST', '/api/settings/users/invite', { email: who.email, display_name: who.name, role: who.role });
  if (invite.status !== 200) throw new Error(`invite ${who.email}: ${invite.status} ${JSON.stringify(invite.body)}`);
  const res = await fetch(`${baseURL}/api/auth/activate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ token: invite.body.activation_token, password: who.password }),
  });
  if (res.status !== 200) throw new Error(`activate ${who.email}: ${res.status} ${await res.text()}`);
}

/** Logs in through the API (not the form) and returns the access token. */
export async function apiLogin(baseURL: string, username: string, password: string): Promise<string> {
  const res = await fetch(`${baseURL}/api/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  if (res.status !== 200) throw new Error(`login as ${username}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}
