// The console's refreshes when the recompute worker outlasts the route's wait (issue 21 §2):
// with REFRESH_WAIT_SECONDS=0 every refresh answers 202 `running` at once, so the fleet and
// health pages must say it is still running, follow GET <route>/{refresh_id} until it answers
// 200, then show the same result as a direct 200 and refetch their data (a fleet refresh also
// the health, risk, critical and analysis answers it recomputed); a failed run (503)
// shows its problem detail. Real browser (Debian Chromium), whole local service, axe.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalService } from '../../infra/local/service.js';
import { localWorkersSettled } from '../../shared/worker-invoke.js';
import { api, apiLogin, expectAccessible, launchBrowser, signIn, type TestBrowser } from '../support/browser.js';
import { startTestService } from '../support/local-service.js';

const PASSWORD = 'console-refresh-admin-password';
const previousWait = process.env.REFRESH_WAIT_SECONDS;
let service: LocalService;
let browser: TestBrowser;
let admin: string;
let page: Page;

beforeAll(async () => {
  // The local service runs in this process and reads the setting on each request.
  process.env.REFRESH_WAIT_SECONDS = '0';
  service = await startTestService({ adminPassword: PASSWORD, demoClusters: 12 });
  [browser, admin] = await Promise.all([launchBrowser(service.url), apiLogin(service.url, 'admin', PASSWORD)]);
  page = await browser.page();
  await signIn(page, 'admin', PASSWORD);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await localWorkersSettled().catch(() => undefined);
  await service?.stop();
  if (previousWait === undefined) delete process.env.REFRESH_WAIT_SECONDS;
  else process.env.REFRESH_WAIT_SECONDS = previousWait;
});

const isPost = (path: string) => (r: { url(): string; request(): { method(): string } }) =>
  new URL(r.url()).pathname === path && r.request().method() === 'POST';
const isFollow = (path: string) => (r: { url(): string; request(): { method(): string } }) =>
  new URL(r.url()).pathname.startsWith(`${path}/`) && r.request().method() === 'GET';

describe('refresh answered 202 and followed', { timeout: 90_000 }, () => {
  it('fleet: says it is still running, follows the run, then shows the clusters scored and the refetched scores', async () => {
    await page.goto('/');
    await page.getByRole('heading', { level: 1, name: 'Fleet overview' }).waitFor();
    await page.locator('main table tbody tr[data-index]').first().waitFor();

    const seen: string[] = [];
    const record = (r: { url(): string; status(): number }) => seen.push(`${r.status()} ${new URL(r.url()).pathname}`);
    page.on('response', record);
    const started = page.waitForResponse(isPost('/api/fleet/refresh'));
    const done = page.waitForResponse((r) => isFollow('/api/fleet/refresh')(r) && r.status() === 200, { timeout: 60_000 });
    await page.getByRole('button', { name: 'Refresh scores' }).click();
    const accepted = await started;
    expect(accepted.status()).toBe(202);
    const running = await accepted.json();
    expect(running).toMatchObject({ status: 'running', refresh_id: expect.any(String) });
    await page.getByText('Still running in the background; checking every 2 s…').waitFor();
    await expectAccessible(page, '/ (fleet) while a refresh runs');

    const finished = await done;
    expect(new URL(finished.url()).pathname).toBe(`/api/fleet/refresh/${running.refresh_id}`);
    const answer = await finished.json();
    // The scores the page shows are refetched once the followed run is done.
    const followedAt = () => seen.indexOf(`200 /api/fleet/refresh/${running.refresh_id}`);
    await expect.poll(() => seen.slice(followedAt() + 1).includes('200 /api/fleet/scores'), { timeout: 30_000 }).toBe(true);
    page.off('response', record);
    const status = page.locator('.fleet-refresh-status');
    await expect.poll(() => status.textContent(), { timeout: 30_000 }).toContain(`Refreshed: ${answer.clusters_scored} clusters scored`);
    expect(await status.textContent()).toMatch(/\d+ clusters scored \(\d+ critical, \d+ warning\)/);
    expect(await page.getByText('Still running in the background').count()).toBe(0);
    const { body } = await api(service.url, admin, 'GET', '/api/fleet/scores');
    expect(answer.clusters_scored).toBe(body.scores.length);
    await expectAccessible(page, '/ (fleet) after a followed refresh');
  });

  it('fleet: the health, risk, critical and analysis answers read before are read again after a refresh (the service recomputed them)', async () => {
    // Each page read once (cached for 30 s), then the fleet page, all in the page's own navigation: one query cache.
    const nav = page.getByRole('navigation', { name: 'Main' });
    const pages = [
      ['Health', 'Health', '/api/health/scores'],
      ['Risk', 'Risk', '/api/risk/snapshots'],
      ['Critical', 'Critical clusters', '/api/critical-clusters'],
      ['Analysis', 'Analysis', '/api/analysis/breaking'],
    ] as const;
    await page.goto('/');
    await page.getByRole('heading', { level: 1, name: 'Fleet overview' }).waitFor();
    for (const [link, heading, path] of pages) {
      const read = page.waitForResponse((r) => new URL(r.url()).pathname === path && r.status() === 200);
      await nav.getByRole('link', { name: link, exact: true }).click();
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      await read;
    }
    await nav.getByRole('link', { name: 'Fleet', exact: true }).click();
    await page.locator('main table tbody tr[data-index]').first().waitFor();

    const done = page.waitForResponse((r) => isFollow('/api/fleet/refresh')(r) && r.status() === 200, { timeout: 60_000 });
    await page.getByRole('button', { name: 'Refresh scores' }).click();
    await done;
    await expect.poll(() => page.locator('.fleet-refresh-status').textContent(), { timeout: 30_000 }).toContain('Refreshed:');
    const read: string[] = [];
    const record = (r: { url(): string; request(): { method(): string } }) => r.request().method() === 'GET' && read.push(new URL(r.url()).pathname);
    page.on('response', record);
    try {
      for (const [link, heading, path] of pages) {
        await nav.getByRole('link', { name: link, exact: true }).click();
        await page.getByRole('heading', { level: 1, name: heading }).waitFor();
        await expect.poll(() => read, { timeout: 10_000 }).toContain(path);
      }
    } finally {
      page.off('response', record);
    }
  });

  it('health: follows the run, then shows the clusters recomputed (no crash on the 202)', async () => {
    await page.goto('/health');
    await page.getByRole('heading', { level: 1, name: 'Health' }).waitFor();
    await page.locator('table.health-table > tbody > tr').first().waitFor();

    const started = page.waitForResponse(isPost('/api/health/refresh'));
    const done = page.waitForResponse((r) => isFollow('/api/health/refresh')(r) && r.status() === 200, { timeout: 60_000 });
    await page.getByRole('button', { name: 'Refresh scores' }).click();
    expect((await started).status()).toBe(202);
    await page.getByText('Still running in the background; checking every 2 s…').waitFor();
    const answer = await (await done).json();
    await page.getByText(`Recomputed ${answer.scores.length} clusters.`).waitFor({ timeout: 30_000 });
    expect(answer.scores.length).toBeGreaterThan(0);
    expect(await page.getByRole('heading', { level: 1, name: 'Health' }).count()).toBe(1);
    await expectAccessible(page, '/health after a followed refresh');
  });

  it('health: a run that failed (503 on the follow route) shows the problem detail', async () => {
    await page.goto('/health');
    await page.getByRole('heading', { level: 1, name: 'Health' }).waitFor();
    const detail = 'The refresh failed in the recompute worker; see its logs.';
    await page.route('**/api/health/refresh/*', (route) =>
      route.fulfill({
        status: 503,
        contentType: 'application/problem+json',
        body: JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', status: 503, detail }),
      }),
    );
    try {
      await page.getByRole('button', { name: 'Refresh scores' }).click();
      const alert = page.getByRole('alert').filter({ hasText: detail });
      await alert.waitFor({ timeout: 30_000 });
      expect(await alert.textContent()).toContain('Service Unavailable (503)');
      expect(await page.getByText('Still running in the background').count()).toBe(0);
      await expectAccessible(page, '/health after a failed refresh');
    } finally {
      await page.unroute('**/api/health/refresh/*');
    }
  });

  it("health: a gateway's own error (no problem+json, no status text over HTTP/2) still says what happened", async () => {
    await page.goto('/health');
    await page.getByRole('heading', { level: 1, name: 'Health' }).waitFor();
    // What API Gateway answers when the function fails or is throttled: {"message": …}, with no title of ours.
    await page.route('**/api/health/refresh', (route) =>
      route.fulfill({ status: 502, contentType: 'application/json', body: JSON.stringify({ message: 'Internal Server Error' }) }),
    );
    try {
      await page.getByRole('button', { name: 'Refresh scores' }).click();
      const alert = page.getByRole('alert').filter({ hasText: '(502)' });
      await alert.waitFor({ timeout: 30_000 });
      expect(await alert.textContent()).toContain('Bad Gateway (502)');
      expect(await alert.textContent()).toContain('Internal Server Error');
    } finally {
      await page.unroute('**/api/health/refresh');
    }
  });
});

// Watch pages left open on a wall screen (api/live.ts): each reads its answers again every minute while the
// tab is shown, says when it last did, and keeps what it shows when a read fails. Time is Playwright's clock.
/** Answers the page's reads that `matches` names 503, as a service that is restarting does. */
const refuseReads = (page: Page, matches: (url: URL) => boolean) =>
  page.route(matches, (route) =>
    route.fulfill({
      status: 503,
      contentType: 'application/problem+json',
      body: JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'The service is restarting.' }),
    }),
  );

/** Moves the page's clock past its next poll until its freshness line says the read failed. */
async function untilUpdateFails(page: Page): Promise<void> {
  const failed = page.locator('.live-stamp [role="status"]');
  await page.clock.fastForward(61_000);
  // The read is tried three times (1 s and 2 s apart) before it counts as failed.
  await expect
    .poll(
      async () => {
        await page.clock.fastForward(2_000);
        return failed.textContent();
      },
      { timeout: 30_000 },
    )
    .toContain('Could not update: The service is restarting.');
}

describe('watch pages stay current', { timeout: 90_000 }, () => {
  const WATCH = [
    ['/', '/api/fleet/scores'],
    ['/health', '/api/health/scores'],
    ['/risk', '/api/risk/snapshots'],
    ['/critical', '/api/critical-clusters'],
    ['/issues', '/api/issues'],
    ['/ai-issues', '/api/ai-issues'],
  ] as const;
  const isGet = (path: string) => (r: { url(): string; request(): { method(): string } }) =>
    new URL(r.url()).pathname === path && r.request().method() === 'GET';

  it('every watch page reads its answer again after a minute shown, and says when it was updated', async () => {
    const watch = await browser.page();
    await watch.clock.install();
    // What the service answered on the wire (CDP's extra info: a revalidated answer reaches the page as its stored 200).
    // Joined by request id when read: Chromium may send a response's extra info before the request's own event.
    const urls = new Map<string, string>();
    const statuses = new Map<string, number>();
    const cdp = await watch.context().newCDPSession(watch);
    cdp.on('Network.requestWillBeSent', (e) => urls.set(e.requestId, new URL(e.request.url).pathname));
    cdp.on('Network.responseReceivedExtraInfo', (e) => statuses.set(e.requestId, e.statusCode));
    /** The wire statuses of the reads of `path` sent since `sent` (the request ids known then), in the order they were sent. */
    const wireSince = (path: string, sent: ReadonlySet<string>) =>
      [...urls].flatMap(([id, p]) => (p === path && !sent.has(id) && statuses.has(id) ? [statuses.get(id)!] : []));
    await cdp.send('Network.enable');
    await signIn(watch, 'admin', PASSWORD);
    for (const [path, read] of WATCH) {
      const first = watch.waitForResponse(isGet(read));
      await watch.goto(path);
      const answered = await first;
      await watch.locator('.live-stamp').getByText('just now').waitFor();
      const again = watch.waitForResponse(isGet(read), { timeout: 15_000 });
      const sent = new Set(urls.keys());
      await watch.clock.fastForward(61_000);
      const reread = await again;
      // The browser's own HTTP cache revalidates the console's fetch (default cache mode): the answer's weak ETag and
      // `private, no-cache` make it send If-None-Match, and an unchanged answer comes back 304 with no body
      // (shared/http/README.md, "Conditional reads"). The fetch itself sees the stored 200.
      const etag = await answered.headerValue('etag');
      expect(etag, `${path}: ${read} answers an ETag`).toMatch(/^W\/"/);
      expect(await reread.request().headerValue('if-none-match'), `${path} revalidates ${read}`).toBe(etag);
      // An issue list's durations of ongoing issues count minutes of the service's clock: one may have passed.
      expect(reread.status(), `${path}: the page's fetch sees the stored answer`).toBe(200);
      await expect.poll(() => wireSince(read, sent).length).toBeGreaterThan(0);
      const onWire = wireSince(read, sent).at(-1);
      if (!read.includes('issues')) expect(onWire, `${path} read ${read} again`).toBe(304);
      else expect([200, 304], `${path} read ${read} again`).toContain(onWire);
      await watch.locator('.live-stamp').getByText('just now').waitFor();
    }
  });

  it('fleet: shows a computation made meanwhile, keeping the focused row', async () => {
    const watch = await browser.page();
    await watch.clock.install();
    await signIn(watch, 'admin', PASSWORD);
    await watch.locator('main table tbody tr[data-index]').nth(3).waitFor();
    const stamp = watch.locator('.fleet-stamp time');
    const before = await stamp.getAttribute('datetime');

    // The fleet is recomputed elsewhere (202 at once here: followed to its end).
    const run = await api(service.url, admin, 'POST', '/api/fleet/refresh');
    if (run.status === 202) {
      await expect.poll(async () => (await api(service.url, admin, 'GET', `/api/fleet/refresh/${run.body.refresh_id}`)).status, { timeout: 60_000 }).toBe(200);
    }
    const now = (await api(service.url, admin, 'GET', '/api/fleet/scores')).body.generated_at as string;
    expect(now).not.toBe(before);

    const link = watch.locator('main table tbody tr[data-index="3"] a');
    const name = await link.textContent();
    await link.focus();
    const again = watch.waitForResponse(isGet('/api/fleet/scores'), { timeout: 15_000 });
    await watch.clock.fastForward(61_000);
    await again;
    await expect.poll(() => stamp.getAttribute('datetime')).toBe(now);
    expect(await watch.evaluate('document.activeElement?.textContent')).toBe(name);
  });

  it('fleet: a read that fails keeps the rows shown and says from when they are', async () => {
    const watch = await browser.page();
    await watch.clock.install();
    await signIn(watch, 'admin', PASSWORD);
    const rows = watch.locator('main table tbody tr[data-index]');
    await rows.first().waitFor();
    const shown = await rows.count();
    await refuseReads(watch, (url) => url.pathname === '/api/fleet/scores');
    await untilUpdateFails(watch);
    expect(await rows.count()).toBe(shown);
    expect(await watch.getByRole('alert').count()).toBe(0);
    await watch.clock.fastForward(4 * 60_000);
    await watch
      .locator('.live-stamp.live-old')
      .getByText(/minutes ago/)
      .waitFor();
    await expectAccessible(watch, '/ (fleet) after a failed background read');
  });

  it('issues: a read that fails keeps the rows and says so once, in the freshness line, not again as an alert', async () => {
    const watch = await browser.page();
    await watch.clock.install();
    await signIn(watch, 'admin', PASSWORD, '/issues');
    const rows = watch.locator('main table tbody tr');
    await rows.first().waitFor();
    const shown = await rows.count();
    await refuseReads(watch, (url) => url.pathname === '/api/issues');
    await untilUpdateFails(watch);
    expect(await rows.count()).toBe(shown);
    expect(await watch.getByRole('alert').count()).toBe(0);
    expect(await watch.getByText('The service is restarting.', { exact: false }).count()).toBe(1);
    // A filter chosen meanwhile has no rows to keep: its failure is the page's problem, said as one.
    await watch.locator('.issues-filters select').first().selectOption('Resolved');
    await expect
      .poll(
        async () => {
          await watch.clock.fastForward(2_000);
          return watch.getByRole('alert').count();
        },
        { timeout: 30_000 },
      )
      .toBe(1);
    expect(await watch.getByRole('alert').textContent()).toContain('The service is restarting.');
  });

  it('fleet: rows that arrive while the pointer moves over the table wait until it rests or leaves', async () => {
    const watch = await browser.page();
    await watch.clock.install();
    await signIn(watch, 'admin', PASSWORD);
    const rows = watch.locator('main table tbody tr[data-index]');
    await rows.nth(3).waitFor();
    const firstName = () => rows.first().locator('a').first().textContent();
    const first = await firstName();
    const stamp = watch.locator('.fleet-stamp time');
    // The next reads are held until the test lets them go (the pointer is moving by then), and answer the fleet
    // computed at a time of their own (shown above the table): the first without the cluster on top.
    let waiting: (() => void) | null = null;
    let answers = 0;
    await watch.route(
      (url) => url.pathname === '/api/fleet/scores',
      async (route) => {
        const answer = await (await route.fetch()).json();
        await new Promise<void>((resolve) => {
          waiting = resolve;
        });
        waiting = null;
        const n = ++answers;
        const scores = n === 1 ? answer.scores.filter((s: { cluster_name: string }) => s.cluster_name !== first) : answer.scores;
        await route.fulfill({ json: { ...answer, generated_at: `2026-01-01T00:0${n}:00.000Z`, scores } });
      },
    );
    // In view: rows above it may take two lines (a long top risk), putting it below a small window's edge.
    await rows.nth(2).scrollIntoViewIfNeeded();
    const box = (await rows.nth(2).boundingBox())!;
    const aim = async () => {
      await watch.mouse.move(box.x + 20, box.y + box.height / 2);
      await watch.mouse.move(box.x + 24, box.y + box.height / 2);
    };
    const readWhileAiming = async (n: number) => {
      const asked = watch.waitForRequest((r) => new URL(r.url()).pathname === '/api/fleet/scores', { timeout: 15_000 });
      await watch.clock.fastForward(61_000);
      await asked;
      await aim();
      await expect.poll(() => answers === n - 1 && waiting !== null).toBe(true);
      (waiting as (() => void) | null)?.();
      await expect.poll(() => stamp.getAttribute('datetime'), { timeout: 15_000 }).toBe(`2026-01-01T00:0${n}:00.000Z`);
    };

    // Aiming at a row while the new answer arrives: the page has it (its time is shown), the rows stay put.
    await readWhileAiming(1);
    expect(await firstName()).toBe(first);
    // Leaving the table shows them.
    await watch.mouse.move(2, 2);
    await expect.poll(firstName).not.toBe(first);
    const shown = await firstName();

    // Resting on the table as long shows them too.
    await readWhileAiming(2);
    expect(await firstName()).toBe(shown);
    await watch.clock.fastForward(3_100);
    await expect.poll(firstName).toBe(first);
    await watch.unrouteAll({ behavior: 'ignoreErrors' });
  });
});
