// The console in a real browser (Debian Chromium) against the whole local
// service: sign-in (wrong password, the account's lockout, the network's), the session across reloads, deep
// links with and without a session, sign-out, the invitation link, and the navigation folded behind Menu on a phone.
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalService } from '../../infra/local/service.js';
import { ORIGIN_VERIFY_HEADER, VIEWER_ADDRESS_HEADER } from '../../shared/auth/caller.js';
import { untilClockReads } from '../../shared/auth/sign-in.js';
import { resetSettings } from '../../shared/config/env.js';
import { api, apiLogin, expectAccessible, launchBrowser, signIn, type TestBrowser } from '../support/browser.js';
import { startTestService } from '../support/local-service.js';

const PASSWORD = 'console-auth-admin-password';
let service: LocalService;
let browser: TestBrowser;
let admin: string;
let clusterId: string;

beforeAll(async () => {
  delete process.env.SES_FROM_ADDRESS; // no mail: the invitation answers its token
  service = await startTestService({ adminPassword: PASSWORD, demoClusters: 3 });
  [browser, admin] = await Promise.all([launchBrowser(service.url), apiLogin(service.url, 'admin', PASSWORD)]);
  const { body } = await api(service.url, admin, 'GET', '/api/fleet/scores');
  clusterId = body.scores[0].cluster_id;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

const path = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search + u.hash;
};

describe('sign-in', { timeout: 60_000 }, () => {
  it('says wrong credentials as such, keeps the user on the form, and passes axe with the message shown', async () => {
    const page = await browser.page();
    await page.goto('/sign-in');
    await expectAccessible(page, 'sign-in');
    // An invitee signs in with their email: the field (still named "Username") says so in its description.
    const username = page.getByRole('textbox', { name: 'Username', exact: true });
    // The page is its form: typing starts in its first field, with no click or Tab first.
    await expect.poll(() => username.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    expect(await username.evaluate((el) => el.ownerDocument.getElementById(el.getAttribute('aria-describedby') ?? '')?.textContent)).toBe(
      'Invited by email? Your username is that email address.',
    );
    await page.getByLabel('Username').fill('nobody-here');
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Wrong username or password.');
    expect(path(page.url())).toBe('/sign-in');
    await expectAccessible(page, 'sign-in with an error');
  });

  it('says the account is locked, with the wait, once the service answers 429', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${service.url}/api/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ username: 'locked-out', password: `wrong-${i}` }),
      });
      expect(res.status).toBe(401);
    }
    const page = await browser.page();
    await page.goto('/sign-in');
    await page.getByLabel('Username').fill('locked-out');
    await page.getByLabel('Password').fill('wrong-again');
    const answer = page.waitForResponse((r) => r.url().endsWith('/api/auth/login'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    expect((await answer).status()).toBe(429);
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toMatch(/^Too many attempts for this account: it is locked for now\. Try again in \d+ minutes?\.$/);
  });

  it('says sign-in from the network is paused, not that the account is locked, when the address has too many failures', async () => {
    // CloudFront's word for a viewer's address, as the stack sets it up: this page's requests come from 203.0.113.90.
    process.env.ORIGIN_VERIFY_TOKEN = 'console-auth-origin-token-0123456789abcdefghij';
    resetSettings();
    try {
      const viewer = { [ORIGIN_VERIFY_HEADER]: process.env.ORIGIN_VERIFY_TOKEN, [VIEWER_ADDRESS_HEADER]: '203.0.113.90' };
      // Five at a time: the address window counts failures, not concurrency, and 30 at once on one local process
      // (libuv's four threads hashing for all of them) can be shed with 503s on a loaded machine.
      const sprayed: number[] = [];
      for (let batch = 0; batch < 6; batch++) {
        const statuses = await Promise.all(
          Array.from({ length: 5 }, (_, n) =>
            fetch(`${service.url}/api/auth/login`, {
              method: 'POST',
              headers: { 'Content-Type': 'application/json', ...viewer },
              body: JSON.stringify({ username: `sprayed-${batch * 5 + n}`, password: 'Winter2026!' }),
            }).then((r) => r.status),
          ),
        );
        sprayed.push(...statuses);
      }
      expect(sprayed, JSON.stringify(sprayed)).toEqual(Array(30).fill(401));
      const page = await browser.page();
      await page.setExtraHTTPHeaders(viewer);
      await page.goto('/sign-in');
      await page.getByLabel('Username').fill('admin');
      await page.getByLabel('Password').fill(PASSWORD);
      const answer = page.waitForResponse((r) => r.url().endsWith('/api/auth/login'));
      await page.getByRole('button', { name: 'Sign in' }).click();
      expect((await answer).status()).toBe(429);
      await expect
        .poll(() => page.getByRole('alert').textContent())
        .toMatch(/^Too many failed sign-ins from your network: sign-in from it is paused for now\. Try again in \d+ minutes?\.$/);
    } finally {
      delete process.env.ORIGIN_VERIFY_TOKEN;
      resetSettings();
    }
  });

  it('signs in, stays signed in across a reload, and signs out', async () => {
    const page = await browser.page();
    await page.goto('/');
    await page.waitForURL((u) => u.pathname === '/sign-in');
    await signIn(page, 'admin', PASSWORD);
    expect(path(page.url())).toBe('/');
    await expect.poll(() => page.locator('.who').textContent()).toContain('superadmin');
    await expectAccessible(page, 'the signed-in shell');

    await page.reload();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(path(page.url())).toBe('/');

    // Signed out from a filtered page: the sign-in page does not lead the next person back to it.
    await page.goto('/audit?action=login');
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const logout = page.waitForResponse((r) => r.url().endsWith('/api/auth/logout'));
    await page.getByRole('button', { name: 'Sign out' }).click();
    const sent = await logout;
    expect(sent.status()).toBe(200);
    expect(sent.request().headers()['x-session-duration']).toMatch(/^\d+$/);
    await page.waitForURL((u) => u.pathname === '/sign-in');
    expect(new URL(page.url()).search).toBe('');
    await expect.poll(() => page.getByRole('status').textContent()).toBe('You have signed out.');
    // The tab names the sign-in page, not the page signed out from (the shell names only its own pages).
    expect(await page.title()).toBe('Sign in · Fleet Health');
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.goto('/issues');
    await page.waitForURL((u) => u.pathname === '/sign-in');
  });

  it("stays signed in while open: halfway through its token's life it renews it, and the next reads carry the new one", async () => {
    const page = await browser.page();
    await page.clock.install();
    await signIn(page, 'admin', PASSWORD, '/audit');
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const stored = async () => JSON.parse(String(await page.evaluate(`sessionStorage.getItem('fleet-health.session')`))) as { token: string };
    const first = (await stored()).token;

    // Nothing is renewed before half of the 12 hours (JWT_TTL_SECONDS' default) are past.
    let renewals = 0;
    page.on('request', (r) => void (r.url().endsWith('/api/auth/renew') && renewals++));
    await page.clock.fastForward('05:59:00');
    expect(renewals).toBe(0);
    // The renewed token is signed in a later second than the first (iat), so the two differ.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const answer = page.waitForResponse((r) => r.url().endsWith('/api/auth/renew'));
    await page.clock.fastForward('00:01:05');
    const renewal = await answer;
    expect(renewal.status()).toBe(200);
    expect(renewal.request().headers().authorization).toBe(`Bearer ${first}`);
    const renewed = ((await renewal.json()) as { access_token: string }).access_token;
    expect(renewed).not.toBe(first);
    await expect.poll(async () => (await stored()).token).toBe(renewed);

    // The page's next read goes with the renewed token, and the session (the user, the page) is as it was.
    const read = page.waitForRequest((r) => new URL(r.url()).pathname === '/api/issues');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Alert issues' }).click();
    expect((await read).headers().authorization).toBe(`Bearer ${renewed}`);
    await page.getByRole('heading', { level: 1, name: 'Alert issues' }).waitFor();
    await expect.poll(() => page.locator('.who').textContent()).toContain('superadmin');
    expect(renewals).toBe(1);
  });
  it('renews on after JWT_TTL_SECONDS is lowered, at half the shorter life, and stops once a renewal reaches the session end', async () => {
    const page = await browser.page();
    await page.clock.install();
    await signIn(page, 'admin', PASSWORD, '/audit');
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const renewals: { exp: number; iat: number }[] = [];
    page.on('response', (r) => {
      if (r.url().endsWith('/api/auth/renew') && r.ok()) void r.json().then((b: { access_token: string }) => renewals.push(decodeJwt(b.access_token) as never));
    });
    let asked = 0;
    page.on('request', (r) => void (r.url().endsWith('/api/auth/renew') && asked++));
    const renewal = () => page.waitForResponse((r) => r.url().endsWith('/api/auth/renew'));
    try {
      process.env.JWT_TTL_SECONDS = '3600';
      resetSettings();
      // The first renewal, at half the 12 hours, answers an hour's token: a shorter life, not the session's end...
      let next = renewal();
      await page.clock.fastForward('06:00:05');
      expect((await next).status()).toBe(200);
      // ...so the next is asked half an hour after it arrived (signed a second later, as it would be).
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      next = renewal();
      await page.clock.fastForward('00:30:05');
      expect((await next).status()).toBe(200);
      await expect.poll(() => renewals.length).toBe(2);
      expect(renewals[0]!.exp - renewals[0]!.iat).toBe(3600);

      // Now the session ends 10 minutes after its sign-in (the server's clock): a renewal is cut at that end,
      // the next two answer that same expiry (one alone could be a lowered JWT_TTL_SECONDS landing on it), and no
      // other is asked for.
      process.env.JWT_SESSION_MAX_SECONDS = '600';
      resetSettings();
      next = renewal();
      await page.clock.fastForward('00:30:05');
      expect((await next).status()).toBe(200);
      next = renewal();
      await page.clock.fastForward('00:05:00');
      expect((await next).status()).toBe(200);
      await expect.poll(() => renewals.length).toBe(4);
      expect(renewals[3]!.exp).toBe(renewals[2]!.exp);
      next = renewal();
      await page.clock.fastForward('00:05:00');
      expect((await next).status()).toBe(200);
      await expect.poll(() => renewals.length).toBe(5);
      expect(renewals[4]!.exp).toBe(renewals[2]!.exp);
      await page.clock.fastForward('00:10:00');
      // A request the timers made would have been seen by now (the ones above were, within milliseconds).
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(asked).toBe(5);
    } finally {
      delete process.env.JWT_TTL_SECONDS;
      delete process.env.JWT_SESSION_MAX_SECONDS;
      resetSettings();
    }
  });
  it('renews on after JWT_TTL_SECONDS is halved, though the renewal at half the old life expires when the token it replaced did', async () => {
    const page = await browser.page();
    await page.clock.install();
    await signIn(page, 'admin', PASSWORD, '/audit');
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const stored = JSON.parse(String(await page.evaluate(`sessionStorage.getItem('fleet-health.session')`))) as { token: string };
    const renewals: { exp: number; iat: number }[] = [];
    page.on('response', (r) => {
      if (r.url().endsWith('/api/auth/renew') && r.ok()) void r.json().then((b: { access_token: string }) => renewals.push(decodeJwt(b.access_token) as never));
    });
    /** Past the renewal of `token` (due half its life after it arrived), and the answer. */
    const renewalOf = async (token: { exp: number; iat: number }) => {
      const count = renewals.length;
      await page.clock.fastForward((token.exp - token.iat) * 500 + 5_000);
      await expect.poll(() => renewals.length).toBe(count + 1);
      return renewals[count]!;
    };
    try {
      // Halving the 12 hours: the renewal due at half of them lives the 6 hours left to the token it replaces, and so
      // expires when that token does (6 + 6), weeks before the session's end. Only the browser's clock is fast-forwarded
      // here, the service's is the real one: a lifetime reaching from the second the renewal is signed in to the
      // replaced token's expiry is that same answer. Signed in a later second (a slow machine), it is a shorter life
      // like any other, renewed in its turn: the next renewal is set up the same way.
      let was = decodeJwt(stored.token) as { exp: number; iat: number };
      for (let attempt = 1; ; attempt++) {
        const second = Math.floor(Date.now() / 1000) + 1;
        await untilClockReads(second * 1000);
        process.env.JWT_TTL_SECONDS = String(was.exp - second);
        resetSettings();
        const renewed = await renewalOf(was);
        if (renewed.exp === was.exp) break;
        expect(attempt, 'every renewal was signed a second late').toBeLessThan(3);
        was = renewed;
      }
      // Not the session's end: the next renewal is asked at half the renewed life, and outlives the token it replaced.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect((await renewalOf(renewals.at(-1)!)).exp).toBeGreaterThan(was.exp);
    } finally {
      delete process.env.JWT_TTL_SECONDS;
      resetSettings();
    }
  });
});

describe('deep links', { timeout: 60_000 }, () => {
  it('keep their path and query across a reload when signed in', async () => {
    const page = await browser.page();
    await page.goto('/sign-in');
    await signIn(page, 'admin', PASSWORD);
    for (const link of [`/clusters/${encodeURIComponent(clusterId)}`, '/issues?severities=critical%2Cwarning']) {
      await page.goto(link);
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      expect(path(page.url())).toBe(link);
      await page.reload();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      expect(path(page.url())).toBe(link);
    }
  });

  it('go through sign-in and back to the page asked for when not signed in', async () => {
    for (const link of [`/clusters/${encodeURIComponent(clusterId)}`, '/issues?severities=critical%2Cwarning', '/issues?severities=critical#list']) {
      const page = await browser.page();
      await page.goto(link);
      await page.waitForURL((u) => u.pathname === '/sign-in');
      expect(new URL(page.url()).searchParams.get('next')).toBe(link);
      await signIn(page, 'admin', PASSWORD);
      expect(path(page.url())).toBe(link);
    }
  });

  it('never leads sign-in to another origin', async () => {
    // '//host', '/\\host' (a browser reads it as '//host'), '/<tab>/host' (URL parsing drops the tab), an absolute URL.
    for (const next of ['//evil.example/x', '/\\evil.example/x', '/\t/evil.example/x', 'https://evil.example/x']) {
      const page = await browser.page();
      await page.goto(`/sign-in?next=${encodeURIComponent(next)}`);
      await signIn(page, 'admin', PASSWORD);
      expect(page.url(), JSON.stringify(next)).toBe(`${service.url}/`);
    }
    // A '\\' in the query (a hand-typed link: browsers do not encode it there) is the page's, not a way out.
    const page = await browser.page();
    const link = `/clusters/${encodeURIComponent(clusterId)}?note=a\\b`;
    await page.goto(`/sign-in?next=${encodeURIComponent(link)}`);
    await signIn(page, 'admin', PASSWORD);
    expect(path(page.url())).toBe(link);
  });
});

describe('the navigation on a phone', { timeout: 60_000 }, () => {
  it('folds behind a Menu button that names the page; a link or Escape folds it again; wide, every link shows under the account’s line', async () => {
    const page = await browser.page();
    await page.setViewportSize({ width: 390, height: 844 });
    await signIn(page, 'admin', PASSWORD, '/issues');
    await page.getByRole('heading', { level: 1, name: 'Alert issues' }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Main' });
    const menu = nav.getByRole('button', { name: 'Menu · Alert issues' });
    const risk = nav.getByRole('link', { name: 'Risk' });
    // Folded: the page starts under one line of navigation, not five.
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await risk.isVisible()).toBe(false);
    const top = await page.getByRole('heading', { level: 1 }).boundingBox();
    expect(top?.y).toBeLessThan(200);

    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await risk.waitFor();
    await expectAccessible(page, 'the navigation unfolded on a phone');
    await risk.click();
    await page.getByRole('heading', { level: 1, name: 'Risk' }).waitFor();
    const onRisk = nav.getByRole('button', { name: 'Menu · Risk' });
    expect(await onRisk.getAttribute('aria-expanded')).toBe('false');
    expect(await risk.isVisible()).toBe(false);

    // Escape from inside the unfolded list folds it and gives the focus back to the button.
    await onRisk.click();
    await risk.focus();
    await page.keyboard.press('Escape');
    expect(await onRisk.getAttribute('aria-expanded')).toBe('false');
    await expect.poll(() => page.evaluate('document.activeElement?.getAttribute("aria-controls")')).toBe('main-nav');

    // Wide enough, there is no button: every link is in view.
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await onRisk.isVisible()).toBe(false);
    expect(await risk.isVisible()).toBe(true);
    // The account's controls share the name's line, above the links (they took a line of their own, under them).
    const middle = (box: { y: number; height: number } | null) => (box ? box.y + box.height / 2 : Number.NaN);
    const [brand, signOut, link] = await Promise.all([
      page.locator('.brand').boundingBox(),
      page.getByRole('button', { name: 'Sign out' }).boundingBox(),
      risk.boundingBox(),
    ]);
    expect(Math.abs(middle(signOut) - middle(brand))).toBeLessThan(12);
    expect(middle(link)).toBeGreaterThan(middle(signOut));
    await page.close();
  });
});

describe('the header at 1280 px', { timeout: 90_000 }, () => {
  it('is as many lines of links and the same height on every page: the page’s own link, marked, is no wider than when not', async () => {
    const page = await browser.page();
    await page.setViewportSize({ width: 1280, height: 800 });
    await signIn(page, 'admin', PASSWORD);
    const nav = page.getByRole('navigation', { name: 'Main' });
    const targets = await nav.locator('#main-nav a').evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
    expect(targets).toContain('/llm-cost'); // a superadmin: every link, the longest line of them
    const measure = async () => ({
      header: (await page.locator('header.topbar').boundingBox())!.height,
      lines: new Set(await nav.locator('#main-nav li').evaluateAll((items) => items.map((li) => Math.round(li.getBoundingClientRect().top)))).size,
      widths: Object.fromEntries(
        await nav.locator('#main-nav a').evaluateAll((links) => links.map((a) => [a.getAttribute('href') ?? '', a.getBoundingClientRect().width] as const)),
      ),
    });
    const seen: { path: string; header: number; lines: number; widths: Record<string, number> }[] = [];
    for (const target of targets) {
      await nav.locator(`a[href="${target}"]`).click();
      await expect.poll(() => nav.locator(`a[href="${target}"]`).getAttribute('aria-current')).toBe('page');
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      seen.push({ path: target, ...(await measure()) });
    }
    for (const [i, s] of seen.entries()) {
      expect.soft(s.lines, `${s.path}: lines of links`).toBe(seen[0]!.lines);
      expect.soft(s.header, `${s.path}: header height`).toBe(seen[0]!.header);
      // Its own link, marked, against the same link on another page, unmarked.
      const unmarked = seen[i === 0 ? 1 : 0]!.widths[s.path];
      expect.soft(s.widths[s.path], `${s.path}: its link's width, marked`).toBeCloseTo(unmarked!, 1);
    }
    await page.close();
  });
});

describe('a page that cannot load', { timeout: 60_000 }, () => {
  it('says so inside the shell, with a Reload that fixes it, and the navigation still works', async () => {
    const page = await browser.page();
    await signIn(page, 'admin', PASSWORD);
    // The Critical page's own code (its lazily loaded chunk, assets/critical-<hash>.js) fails to arrive.
    const chunk = (u: URL) => /^\/assets\/critical-[^/]+\.js$/.test(u.pathname);
    await page.route(chunk, (route) => route.abort());
    const main = page.getByRole('navigation', { name: 'Main' });
    await main.getByRole('link', { name: 'Critical' }).click();
    await page.getByRole('heading', { level: 1, name: 'This page could not be shown' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('Reloading loads the console afresh');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await expectAccessible(page, 'a page whose code failed to load');

    // The navigation still leads elsewhere; and once the chunk arrives, Reload shows the page.
    await main.getByRole('link', { name: 'Health' }).click();
    await page.getByRole('heading', { level: 1, name: 'Health' }).waitFor();
    await main.getByRole('link', { name: 'Critical' }).click();
    await page.getByRole('heading', { level: 1, name: 'This page could not be shown' }).waitFor();
    await page.unroute(chunk);
    await page.getByRole('button', { name: 'Reload' }).click();
    await page.getByRole('heading', { level: 1, name: 'Critical clusters' }).waitFor();
  });

  it('is shown once its code arrives, on the next visit, without a reload: a moment offline does not break it for the tab', async () => {
    const page = await browser.page();
    await signIn(page, 'admin', PASSWORD);
    // Marks this document: a full reload would lose it.
    await page.evaluate('window.sameDocument = true');
    const chunk = (u: URL) => /^\/assets\/analysis-[^/]+\.js$/.test(u.pathname);
    await page.route(chunk, (route) => route.abort('internetdisconnected'));
    const main = page.getByRole('navigation', { name: 'Main' });
    await main.getByRole('link', { name: 'Analysis' }).click();
    await page.getByRole('heading', { level: 1, name: 'This page could not be shown' }).waitFor();

    // The connection is back: the user goes elsewhere, then opens the page again from the navigation.
    await page.unroute(chunk);
    await main.getByRole('link', { name: 'Health' }).click();
    await page.getByRole('heading', { level: 1, name: 'Health' }).waitFor();
    await main.getByRole('link', { name: 'Analysis' }).click();
    await page.getByRole('heading', { level: 1, name: 'Analysis' }).waitFor();
    expect(await page.evaluate('window.sameDocument')).toBe(true);
  });

  it('while the service does not answer, says so in plain words, and Reload stays in the console until it answers', async () => {
    const page = await browser.page();
    await signIn(page, 'admin', PASSWORD);
    // The service stops answering (every request of the page refused), then the user opens a page not loaded yet.
    const everything = () => true;
    await page.route(everything, (route) => route.abort('connectionrefused'));
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Risk' }).click();
    await page.getByRole('heading', { level: 1, name: 'This page could not be shown' }).waitFor();
    const alert = page.getByRole('alert');
    expect(await alert.textContent()).toContain('The console could not load this page from the service');
    // Reload would leave for the browser's own error page, the console gone: it says so and stays.
    await page.getByRole('button', { name: 'Reload' }).click();
    await alert.getByText('The service still does not answer').waitFor();
    expect(new URL(page.url()).pathname).toBe('/risk');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await expectAccessible(page, 'a page that could not load, the service not answering');

    // The service answers again: Reload shows the page.
    await page.unroute(everything);
    await page.getByRole('button', { name: 'Reload' }).click();
    await page.getByRole('heading', { level: 1, name: 'Risk' }).waitFor();
  });
});

describe('a browser that goes offline', { timeout: 60_000 }, () => {
  it('says a read asked for meanwhile did not get through, instead of showing the old rows under the new filter, and reads it once back online', async () => {
    const page = await browser.page();
    await signIn(page, 'admin', PASSWORD, '/audit');
    await page.getByText(/entries? \(the log lists/).waitFor();
    await page.context().setOffline(true);
    await page.getByLabel('Action').selectOption('logout');
    const alert = page.getByRole('alert');
    await alert.getByText('The service did not answer. Check your connection and try again.').waitFor();
    expect(await page.locator('.audit-table').count()).toBe(0);

    await page.context().setOffline(false);
    // The logout entries (none, or those of the tests before) in place of the error.
    await page.getByText(/ of action logout \(the log lists|^No logout entries\.$/).waitFor();
    expect(await alert.count()).toBe(0);
  });
});

describe('the invitation link', { timeout: 60_000 }, () => {
  it('activates the invited user with the password they choose and signs them in with their role', async () => {
    const email = `invited-${Date.now()}@example.com`;
    const invite = await api(service.url, admin, 'POST', '/api/settings/users/invite', { email, display_name: 'Ivy Invited', role: 'viewer' });
    expect(invite.status).toBe(200);
    expect(invite.body.email_sent).toBe(false);
    const token: string = invite.body.activation_token;
    expect(token).toBeTruthy();

    const page = await browser.page();
    await page.goto(`/activate#token=${encodeURIComponent(token)}`);
    await expectAccessible(page, 'activate');
    // Read, then gone from the address bar: the link's token is in no history entry or screenshot.
    await expect.poll(() => page.url()).toBe(`${service.url}/activate`);
    const submit = page.getByRole('button', { name: 'Activate and sign in' });
    await page.getByLabel('New password').fill('short');
    await expect.poll(() => page.locator('#password-rule').textContent()).toBe('At least 8 characters (3 more).');
    expect(await submit.isDisabled()).toBe(true);
    await page.getByLabel('New password').fill('ivy-chooses-this-one');
    await page.getByLabel('Repeat it').fill('ivy-chooses-this-on');
    await page.getByText('The two passwords differ.').waitFor();
    // Said to whoever is in the field, not only shown: its description is the message.
    expect(await page.getByLabel('Repeat it').getAttribute('aria-describedby')).toBe('password-repeat-rule');
    expect(await page.locator('#password-repeat-rule').textContent()).toBe('The two passwords differ.');
    expect(await submit.isDisabled()).toBe(true);
    await expectAccessible(page, 'activate with inline errors');
    await page.getByLabel('Repeat it').fill('ivy-chooses-this-one');
    await submit.click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(path(page.url())).toBe('/');
    await expect.poll(() => page.locator('.who').textContent()).toBe('Ivy Invited · viewer');

    // The password works from now on, and the link does not work twice.
    expect(await apiLogin(service.url, email, 'ivy-chooses-this-one')).toBeTruthy();
    // A link written before the token moved to the fragment is read the same way.
    const again = await browser.page();
    await again.goto(`/activate?token=${encodeURIComponent(token)}`);
    await again.getByLabel('New password').fill('another-password');
    await again.getByLabel('Repeat it').fill('another-password');
    await again.getByRole('button', { name: 'Activate and sign in' }).click();
    await expect.poll(() => again.getByRole('alert').textContent()).toBe('The link’s token is invalid, already used or expired.');
  });

  it('reads a newer link opened in the same tab, where only the fragment changes and nothing reloads', async () => {
    const email = `relinked-${Date.now()}@example.com`;
    const invite = await api(service.url, admin, 'POST', '/api/settings/users/invite', { email, display_name: 'Rex Relinked', role: 'viewer' });
    expect(invite.status).toBe(200);
    const page = await browser.page();
    await page.goto('/activate');
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('This link has no invitation token.');
    // A link whose token is void (an older invitation's): refused, as it should be.
    await page.goto('/activate#token=voided-by-a-newer-invitation');
    await page.getByLabel('New password').fill('rex-chooses-this-one');
    await page.getByLabel('Repeat it').fill('rex-chooses-this-one');
    await page.getByRole('button', { name: 'Activate and sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('The link’s token is invalid, already used or expired.');
    // The new link pasted into the same tab: its token is the one sent, and the old failure is gone.
    await page.goto(`/activate#token=${encodeURIComponent(invite.body.activation_token)}`);
    await expect.poll(() => page.url()).toBe(`${service.url}/activate`);
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.getByRole('button', { name: 'Activate and sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await expect.poll(() => page.locator('.who').textContent()).toBe('Rex Relinked · viewer');
  });

  it('reads a link that arrives between the page showing and its effects running (a busy machine)', async () => {
    const email = `hurried-${Date.now()}@example.com`;
    const invite = await api(service.url, admin, 'POST', '/api/settings/users/invite', { email, display_name: 'Hal Hurried', role: 'viewer' });
    expect(invite.status).toBe(200);
    const page = await browser.page();
    // The link's fragment arrives as the page's first render is put in the document, before React runs its effects
    // (a MutationObserver's callback is a microtask; passive effects come in a later task).
    await page.addInitScript(`new MutationObserver((_, observer) => {
      if (location.pathname === '/activate' && document.querySelector('[role="alert"]')) {
        observer.disconnect();
        location.hash = 'token=' + ${JSON.stringify(encodeURIComponent(invite.body.activation_token))};
      }
    }).observe(document, { childList: true, subtree: true })`);
    await page.goto('/activate');
    await page.getByLabel('New password').fill('hal-chooses-this-one');
    await page.getByLabel('Repeat it').fill('hal-chooses-this-one');
    await page.getByRole('button', { name: 'Activate and sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(page.url()).toBe(`${service.url}/`);
  });

  it('says what to do when the link has no token', async () => {
    const page = await browser.page();
    await page.goto('/activate');
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('This link has no invitation token.');
    await expectAccessible(page, 'activate without a token');
  });
});
