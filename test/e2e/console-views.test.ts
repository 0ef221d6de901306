// The console's views in a real browser (Debian Chromium) on a small demo fleet
// through the whole local service: each page shows what the API answers,
// filters round-trip through the URL (set in the UI, kept across a reload with
// the same rows), viewers get no refresh, and axe finds nothing serious.
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalService } from '../../infra/local/service.js';
import { claimTask, completeTask, createTask } from '../../shared/db/investigations.js';
import { claimTicket, markTicketUnconfirmed } from '../../shared/db/issues.js';
import { api, expectAccessible, signIn, type TestBrowser } from '../support/browser.js';
import { type ConsoleUnderTest, startConsole } from '../support/console.js';

const PASSWORD = 'console-views-admin-password';
const VIEWER = { email: 'vera-viewer@example.com', name: 'Vera Viewer', password: 'vera-views-password' };
let running: ConsoleUnderTest | undefined;
let service: LocalService;
let browser: TestBrowser;
let admin: string;
let adminPage: Page;
let viewerPage: Page;

beforeAll(async () => {
  delete process.env.SES_FROM_ADDRESS;
  running = await startConsole({ adminPassword: PASSWORD, demoClusters: 12, viewer: VIEWER });
  ({ service, browser, admin, adminPage: adminPage, viewerPage } = running);
}, 120_000);

afterAll(async () => {
  await running?.close();
});

const search = (page: Page) => new URL(page.url()).searchParams;

/** Opens a page of the console and waits for its heading and its table's first row. */
async function open(page: Page, path: string, heading: string, rows: string): Promise<void> {
  await page.goto(path);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await page.locator(rows).first().waitFor();
}

/** Runs `body` with the page at `viewport`, then gives the page its own size back (the next test expects it). */
async function atViewport<T>(page: Page, viewport: { width: number; height: number }, body: () => Promise<T>): Promise<T> {
  const size = page.viewportSize();
  await page.setViewportSize(viewport);
  try {
    return await body();
  } finally {
    if (size) await page.setViewportSize(size);
  }
}

/** Clusters newCluster made: no metrics ever arrive for them, so they are stale (the staleness test allows for them). */
const metricless = new Set<string>();

/** A cluster for the inventory (POST /api/ingest/clusters), of a fresh id. */
function newCluster(cluster_name: string, customer_name: string) {
  const cluster_id = randomUUID();
  metricless.add(cluster_id);
  return {
    cluster_id,
    cluster_name,
    customer_name,
    account_id: '444455558888',
    account_name: customer_name,
    email: 'ops@example.com',
    customer_tier: 'B',
    cluster_type: 'ELASTIC',
    region: 'US East (us-east-1)',
    engine_version: '3.3.4',
    resource_state: 'RUNNING',
    node_count: 3,
  };
}

/** One firing alert per [cluster id, alert name, minutes since it started (10)], through the Alertmanager webhook: an issue each (grouped by cluster and alert name). */
async function fire(...pairs: [string, string, number?][]): Promise<void> {
  const alerts = pairs.map(([clusterId, name, startedMinutesAgo = 10]) => ({
    status: 'firing',
    labels: { alertname: name, cluster_id: clusterId, severity: 'warning' },
    annotations: { description: name },
    startsAt: new Date(Date.now() - startedMinutesAgo * 60_000).toISOString(),
    endsAt: '0001-01-01T00:00:00Z',
    fingerprint: `${clusterId}-${name}`,
  }));
  expect((await api(service.url, service.ingestToken, 'POST', '/api/ingest/alerts', { version: '4', alerts })).body).toMatchObject({ accepted: pairs.length });
}

/** The id of the one issue named `name`. */
async function issueIdOf(name: string): Promise<string> {
  const { body } = await api(service.url, admin, 'GET', `/api/issues?search=${encodeURIComponent(name)}`);
  expect(body.issues.map((i: { issue_name: string }) => i.issue_name)).toEqual([name]);
  return body.issues[0].issue_id;
}

/** A new cluster of its own (`prefix-xxxxxxxx` of `customer`) with one firing alert `alertName`: the id of its issue. */
async function issueOfNewCluster(prefix: string, customer: string, alertName: string): Promise<string> {
  const cluster = newCluster(`${prefix}-${randomUUID().slice(0, 8)}`, customer);
  expect((await api(service.url, service.ingestToken, 'POST', '/api/ingest/clusters', { clusters: [cluster] })).body).toMatchObject({ accepted: 1 });
  await fire([cluster.cluster_id, alertName]);
  const { body } = await api(service.url, admin, 'GET', `/api/issues?cluster=${encodeURIComponent(cluster.cluster_name)}`);
  return body.issues[0].issue_id;
}

describe('keyboard focus', { timeout: 60_000 }, () => {
  it('stays on a button its own press leaves with nothing to do (Clear filters), not dropped to the top of the page', async () => {
    await adminPage.goto('/?tier=S');
    const clear = adminPage.getByRole('button', { name: 'Clear filters' });
    await clear.focus();
    await adminPage.keyboard.press('Enter');
    await expect.poll(() => clear.isDisabled()).toBe(true);
    expect(await adminPage.evaluate('document.activeElement && document.activeElement.textContent')).toBe('Clear filters');
    // Pressed again while it cannot act: nothing happens, and the focus stays.
    await adminPage.keyboard.press('Enter');
    expect(new URL(adminPage.url()).search).toBe('');
    expect(await adminPage.evaluate('document.activeElement && document.activeElement.textContent')).toBe('Clear filters');
  });
});

describe('opening a page', { timeout: 60_000 }, () => {
  it('names it in the document title and moves keyboard focus to it, as a page load would; back restores both', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/health/scores');
    const first = body.scores[0] as { cluster_id: string; cluster_name: string };
    await open(adminPage, '/health', 'Health', 'table.health-table > tbody > tr');
    expect(await adminPage.title()).toBe('Health · Fleet Health');
    await adminPage.locator('table.health-table > tbody > tr > th').getByRole('link', { name: first.cluster_name, exact: true }).first().click();
    await adminPage.getByRole('heading', { level: 1, name: first.cluster_name }).waitFor();
    await expect.poll(() => adminPage.title()).toBe(`${first.cluster_name} · Fleet Health`);
    expect(await adminPage.evaluate('document.activeElement && document.activeElement.id')).toBe('main');
    await adminPage.goBack();
    await adminPage.getByRole('heading', { level: 1, name: 'Health' }).waitFor();
    await expect.poll(() => adminPage.title()).toBe('Health · Fleet Health');

    // Scrolled to the list's end, a link opens its page at the top; back returns to where the list was.
    const last = body.scores.at(-1) as { cluster_name: string };
    await adminPage.evaluate('window.scrollTo(0, document.body.scrollHeight)');
    const scrolled = Number(await adminPage.evaluate('window.scrollY'));
    expect(scrolled).toBeGreaterThan(0);
    await adminPage.locator('table.health-table > tbody > tr > th').getByRole('link', { name: last.cluster_name, exact: true }).last().click();
    await adminPage.getByRole('heading', { level: 1, name: last.cluster_name }).waitFor();
    await expect.poll(() => adminPage.evaluate('window.scrollY')).toBe(0);
    await adminPage.goBack();
    await adminPage.getByRole('heading', { level: 1, name: 'Health' }).waitFor();
    // Where it was, not merely scrolled: the table rendered no row until measured, and the restored position fell to
    // the end of a page that short (46 px of 515).
    await expect.poll(async () => Number(await adminPage.evaluate('window.scrollY'))).toBe(scrolled);
  });
});

describe('health', { timeout: 60_000 }, () => {
  const ROWS = 'table.health-table > tbody > tr';

  it('shows every cluster the API scores, worst first, and passes axe', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/health/scores');
    await open(adminPage, '/health', 'Health', ROWS);
    const names = await adminPage.locator(`${ROWS} > th`).allTextContents();
    expect(names).toEqual(body.scores.map((s: { cluster_name: string }) => s.cluster_name));
    await expectAccessible(adminPage, '/health');
    // The expander's cell holds it whole: cut by a pixel, the cell drew an ellipsis (a dot) beside every triangle.
    const cut = await adminPage.locator(`${ROWS} > td:first-child`).evaluateAll((cells) => cells.filter((c) => c.scrollWidth > c.clientWidth).length);
    expect(cut).toBe(0);
  });

  it('keeps the classification and search filters in the URL, and the same rows after a reload', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/health/scores');
    const worst = body.scores[0];
    await open(adminPage, '/health', 'Health', ROWS);
    await adminPage.getByLabel('Classification').selectOption(worst.classification);
    await adminPage.waitForURL((u) => u.searchParams.get('class') === worst.classification);
    const expected = body.scores
      .filter((s: { classification: string }) => s.classification === worst.classification)
      .map((s: { cluster_name: string }) => s.cluster_name);
    await expect.poll(() => adminPage.locator(`${ROWS} > th`).allTextContents()).toEqual(expected);

    await adminPage.reload();
    await adminPage.locator(ROWS).first().waitFor();
    expect(await adminPage.getByLabel('Classification').inputValue()).toBe(worst.classification);
    expect(await adminPage.locator(`${ROWS} > th`).allTextContents()).toEqual(expected);

    await adminPage.getByLabel('Search').fill(worst.cluster_name);
    await adminPage.waitForURL((u) => u.searchParams.get('q') === worst.cluster_name);
    await adminPage.reload();
    await adminPage.locator(ROWS).first().waitFor();
    expect(await adminPage.getByLabel('Search').inputValue()).toBe(worst.cluster_name);
    expect(await adminPage.locator(`${ROWS} > th`).allTextContents()).toEqual([worst.cluster_name]);
    expect(search(adminPage).get('class')).toBe(worst.classification);
    await expectAccessible(adminPage, '/health filtered');
  });

  it("sorts by a column's header, keeps the order in the URL and beside a filter, and says the order to a screen reader", async () => {
    type Row = { cluster_name: string; customer_name: string; overall_score: number; classification: string };
    const scores: Row[] = (await api(service.url, admin, 'GET', '/api/health/scores')).body.scores;
    const names = () => adminPage.locator(`${ROWS} > th`).allTextContents();
    const header = (name: string) => adminPage.locator('table.health-table thead th').filter({ has: adminPage.getByRole('button', { name }) });
    await open(adminPage, '/health', 'Health', ROWS);
    const serviceOrder = await names();
    expect(serviceOrder).toEqual(scores.map((s) => s.cluster_name));
    // aria-sort is on the header that sorts the rows, and on no other.
    expect(await header('Cluster').getAttribute('aria-sort')).toBeNull();

    await header('Cluster').getByRole('button').click();
    await adminPage.waitForURL((u) => u.searchParams.get('sort') === 'cluster_name');
    const byName = [...scores].sort((a, b) => a.cluster_name.localeCompare(b.cluster_name, undefined, { numeric: true }));
    await expect.poll(names).toEqual(byName.map((s) => s.cluster_name));
    expect(await header('Cluster').getAttribute('aria-sort')).toBe('ascending');
    expect(await adminPage.locator('table.health-table caption').textContent()).toContain('sorted by');
    await header('Cluster').getByRole('button').click();
    await adminPage.waitForURL((u) => u.searchParams.get('sort') === '-cluster_name');
    await expect.poll(names).toEqual(byName.map((s) => s.cluster_name).reverse());
    // The third click restores the service's order (worst first), and the URL and caption say so.
    await header('Cluster').getByRole('button').click();
    await adminPage.waitForURL((u) => !u.searchParams.has('sort'));
    await expect.poll(names).toEqual(serviceOrder);
    expect(await header('Cluster').getAttribute('aria-sort')).toBeNull();
    expect(await adminPage.locator('table.health-table caption').textContent()).toContain('worst first');

    // The best score first, then a reload keeps it; the filter narrows the sorted rows.
    await header('Health score').getByRole('button').click();
    await header('Health score').getByRole('button').click();
    await adminPage.waitForURL((u) => u.searchParams.get('sort') === '-overall_score');
    // Scores as the cells write them (tenths): in order, each cluster once.
    const shown = async () => (await adminPage.locator(`${ROWS} > td.num`).allTextContents()).map(Number);
    const descending = (list: number[]) => list.every((n, i) => i === 0 || list[i - 1]! >= n);
    await expect.poll(async () => descending(await shown()) && (await names()).length).toBe(scores.length);
    expect(new Set(await names())).toEqual(new Set(scores.map((s) => s.cluster_name)));
    await adminPage.reload();
    await adminPage.locator(ROWS).first().waitFor();
    expect(await header('Health score').getAttribute('aria-sort')).toBe('descending');
    const cls = scores[0]!.classification;
    const ofClass = scores.filter((s) => s.classification === cls).map((s) => s.cluster_name);
    await adminPage.getByLabel('Classification').selectOption(cls);
    await expect.poll(async () => (await names()).sort()).toEqual([...ofClass].sort());
    expect(descending(await shown())).toBe(true);
    expect(search(adminPage).get('sort')).toBe('-overall_score');
    await expectAccessible(adminPage, '/health sorted by score');
  });

  it('renders only the rows in view of a long fleet (virtualised): scrolling reaches the last, a filter finds any, opened rows stay', async () => {
    // 600 clusters: the service's own answer, each score repeated under new ids (this page only), so the test stays fast.
    const COPIES = 50;
    const page = await browser.page();
    await signIn(page, 'admin', PASSWORD);
    await page.route('**/api/health/scores', async (route) => {
      const answer = await (await route.fetch()).json();
      const scores = answer.scores as { cluster_id: string; cluster_name: string }[];
      answer.scores = Array.from({ length: COPIES }, (_, copy) =>
        scores.map((s) => ({ ...s, cluster_id: `${s.cluster_id}-${copy}`, cluster_name: `${s.cluster_name}-${copy}` })),
      ).flat();
      await route.fulfill({ json: answer });
    });
    const { body } = await api(service.url, admin, 'GET', '/api/health/scores');
    const total = body.scores.length * COPIES;
    await open(page, '/health', 'Health', 'table.health-table > tbody[data-index]');
    await page.getByText(`${total} clusters`, { exact: true }).waitFor();
    const table = page.locator('table.health-table');
    expect(await table.getAttribute('aria-rowcount')).toBe(String(total + 1));
    const rendered = () => page.locator('table.health-table > tbody[data-index]').count();
    expect(await rendered()).toBeLessThan(80);

    // The scroll region reaches the end: the last cluster renders, and still only a window of rows.
    const lastName = `${body.scores.at(-1).cluster_name}-${COPIES - 1}`;
    await table.evaluate((t) => {
      const region = t.closest('section')!;
      region.scrollTop = region.scrollHeight;
    });
    const last = page.locator('table.health-table > tbody > tr > th').getByRole('link', { name: lastName, exact: true });
    await last.waitFor();
    expect(await rendered()).toBeLessThan(80);
    expect(await last.evaluate((a) => a.closest('tr')!.getAttribute('aria-rowindex'))).toBe(String(total + 1));

    // Its dimensions open below it, in the URL, and count in the row indexes.
    await page.getByRole('button', { name: `Dimensions of ${lastName}`, exact: true }).click();
    await page.getByRole('table', { name: `Dimensions of ${lastName}` }).waitFor();
    expect(await table.getAttribute('aria-rowcount')).toBe(String(total + 2));
    await expectAccessible(page, '/health with 600 clusters, scrolled to the end');

    // A search finds a cluster far down the list.
    const farName = `${body.scores[0].cluster_name}-${COPIES - 2}`;
    await page.getByLabel('Search').fill(farName);
    await expect.poll(() => page.locator('table.health-table > tbody > tr > th').allTextContents()).toEqual([farName]);
  });

  it("the inventory's every cluster, shown on demand, renders only the rows in view (virtualised)", async () => {
    // 600 clusters: the service's own inventory, each cluster repeated under new ids (this page only).
    const COPIES = 50;
    const page = await browser.page();
    await signIn(page, 'admin', PASSWORD);
    await page.route('**/api/health/enrichment', async (route) => {
      const answer = await (await route.fetch()).json();
      const clusters = answer.clusters as { cluster_id: string; cluster_name: string }[];
      answer.clusters = Array.from({ length: COPIES }, (_, copy) =>
        clusters.map((c) => ({ ...c, cluster_id: `${c.cluster_id}-${copy}`, cluster_name: `${c.cluster_name}-${copy}` })),
      ).flat();
      await route.fulfill({ json: answer });
    });
    const { body } = await api(service.url, admin, 'GET', '/api/health/enrichment');
    const total = body.clusters.length * COPIES;
    await open(page, '/health', 'Health', 'table.health-table > tbody[data-index]');
    await page.getByRole('button', { name: `Show all ${total} clusters` }).click();
    const inventory = page.getByRole('region', { name: 'Cluster type and region per cluster' });
    await inventory.locator('tbody tr[data-index]').first().waitFor();
    const rendered = () => inventory.locator('tbody tr[data-index]').count();
    expect(await rendered()).toBeLessThan(60);
    const lastName = `${body.clusters.at(-1).cluster_name}-${COPIES - 1}`;
    await inventory.evaluate((region) => {
      region.scrollTop = region.scrollHeight;
    });
    await inventory.getByRole('link', { name: lastName, exact: true }).waitFor();
    expect(await rendered()).toBeLessThan(60);
    // Each row is named by its cluster: a row header a screen reader says with every cell of the row.
    expect(await inventory.getByRole('rowheader', { name: lastName, exact: true }).count()).toBe(1);
    await expectAccessible(page, '/health with an inventory of 600 clusters shown');
  });

  it('says above its tiles that they count by metrics score, which the Fleet overview does not (its counts differ under the same words)', async () => {
    const kpis = (await api(service.url, admin, 'GET', '/api/health/kpis')).body.kpis;
    await open(adminPage, '/health', 'Health', ROWS);
    const note = adminPage.locator('#health-tiles-note');
    expect(await note.textContent()).toContain('Healthy, Warning and Critical count clusters by metrics score');
    expect(await note.textContent()).toContain('no alerts, no tier adjustment');
    expect(await note.textContent()).toContain('the Fleet overview counts them by tier-adjusted score');
    const tiles = adminPage.getByRole('list', { name: 'Health KPIs' });
    expect(await tiles.getAttribute('aria-describedby')).toBe('health-tiles-note');
    // Above the tiles, and the tiles are /api/health/kpis's counts (the note's measure).
    expect(
      await adminPage.evaluate(
        `!!(document.querySelector('#health-tiles-note').compareDocumentPosition(document.querySelector('.health-kpis')) & Node.DOCUMENT_POSITION_FOLLOWING)`,
      ),
    ).toBe(true);
    expect(await tiles.locator('.tile', { hasText: 'Critical' }).locator('.value').textContent()).toBe(String(kpis.critical_count));
  });

  it('offers the refresh to admins only', async () => {
    await open(adminPage, '/health', 'Health', ROWS);
    const refreshed = adminPage.waitForResponse((r) => r.url().endsWith('/api/health/refresh') && r.request().method() === 'POST');
    await adminPage.getByRole('button', { name: 'Refresh scores' }).click();
    expect((await refreshed).status()).toBe(200);
    await adminPage.getByText(/^Recomputed \d+ clusters\.$/).waitFor();

    await open(viewerPage, '/health', 'Health', ROWS);
    expect(await viewerPage.getByRole('button', { name: /refresh/i }).count()).toBe(0);
    await expectAccessible(viewerPage, '/health as a viewer');
  });
});

describe('risk', { timeout: 60_000 }, () => {
  // The snapshots are a virtualised DataTable (rows carry data-index): only the rows in view are in the DOM.
  const ROWS = 'main table tbody tr[data-index]';
  const count = (page: Page) => page.locator('.view-count').first().textContent();

  it('shows the snapshots the API answers, and passes axe', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/risk/snapshots');
    const names = body.clusters.map((c: { cluster_name: string }) => c.cluster_name);
    await open(adminPage, '/risk', 'Risk', ROWS);
    expect(names).toContain((await adminPage.locator(`${ROWS} a`).first().textContent())?.trim());
    await expect.poll(() => count(adminPage)).toBe(`${names.length} clusters`);
    // The tiles count risk levels (the risk rules), not the Fleet overview's or Health page's score classes with the same words.
    const note = adminPage.locator('#risk-tiles-note');
    expect(await note.textContent()).toContain('count clusters by risk level, set by the risk rules');
    expect(await note.textContent()).toContain('the Fleet overview counts them by tier-adjusted score, the Health page by metrics score');
    const warning = adminPage.getByRole('list', { name: 'Risk summary' }).getByRole('button', { name: 'Warning' });
    expect(await warning.textContent()).toContain(String(body.summary.warning));
    expect(await warning.getAttribute('aria-describedby')).toBe('risk-tiles-note');
    // No column's heading spills out of its sort button, to be cut at the cell's edge (a metric's word wider than its column did).
    const cut = await adminPage.evaluate(
      `[...document.querySelectorAll('main thead th button')].filter((button) => {
        const text = document.createRange();
        text.selectNodeContents(button);
        const words = text.getBoundingClientRect(), box = button.getBoundingClientRect();
        return words.left < box.left - 1 || words.right > box.right + 1;
      }).map((button) => button.textContent)`,
    );
    expect(cut).toEqual([]);
    // Each metric column is named as every page names the metric, its unit said where the cells are bare numbers.
    const heads = (await adminPage.locator('main thead th').allTextContents()).map((t) => t.replace(/[↕▲▼]/g, '').trim());
    expect(heads).toEqual(expect.arrayContaining(['Compaction score', 'Disk used (%)', 'Query errors (7 d)']));
    expect(heads.filter((h) => h.includes('_'))).toEqual([]);
    await expectAccessible(adminPage, '/risk');
  });

  it('keeps the risk level filter in the URL, and the same rows after a reload', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/risk/snapshots');
    const level: string = body.clusters[0].risk_level;
    const same = body.clusters.filter((c: { risk_level: string }) => c.risk_level === level).length;
    const shown = same === body.clusters.length ? `${same} clusters` : `${same} of ${body.clusters.length} clusters`;
    const levels = () => adminPage.locator(`${ROWS} .badge`).allTextContents();
    await open(adminPage, '/risk', 'Risk', ROWS);
    await adminPage.getByLabel('Risk level').selectOption(level);
    await adminPage.waitForURL((u) => u.searchParams.get('level') === level);
    await expect.poll(() => count(adminPage)).toBe(shown);
    expect(new Set(await levels())).toEqual(new Set([level]));
    await adminPage.reload();
    await adminPage.locator(ROWS).first().waitFor();
    expect(await adminPage.getByLabel('Risk level').inputValue()).toBe(level);
    await expect.poll(() => count(adminPage)).toBe(shown);
    expect(new Set(await levels())).toEqual(new Set([level]));
  });

  it("takes a link's level in any case, as its controls show it; a value they cannot show filters nothing", async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/risk/snapshots');
    const total = body.clusters.length;
    const critical = body.clusters.filter((c: { risk_level: string }) => c.risk_level === 'Critical').length;
    expect(critical).toBeGreaterThan(0);
    await open(adminPage, '/risk?level=critical', 'Risk', ROWS);
    expect(await adminPage.getByLabel('Risk level').inputValue()).toBe('Critical');
    await expect.poll(() => count(adminPage)).toBe(`${critical} of ${total} clusters`);
    expect(await adminPage.getByRole('button', { pressed: true }).allTextContents()).toEqual([expect.stringContaining('Critical')]);
    await open(adminPage, '/risk?level=bogus&metric=nope', 'Risk', ROWS);
    expect(await adminPage.getByLabel('Risk level').inputValue()).toBe('');
    expect(await adminPage.getByLabel('Metric off green').inputValue()).toBe('');
    await expect.poll(() => count(adminPage)).toBe(`${total} clusters`);
    // The level column's first click puts the worst first, as the fleet page's class column does.
    await adminPage.getByRole('columnheader', { name: 'Risk level' }).getByRole('button').click();
    await adminPage.waitForURL((u) => u.searchParams.get('sort') !== null);
    await expect.poll(() => adminPage.locator(`${ROWS} .badge`).first().textContent()).toBe('Critical');
    // The rules table scrolls sideways at phone width: a region the keyboard can reach.
    const rules = adminPage.getByRole('region', { name: 'Risk rules in force' });
    expect(await rules.getAttribute('tabindex')).toBe('0');
  });

  it('shows a viewer no refresh and passes axe for them', async () => {
    await open(viewerPage, '/risk', 'Risk', ROWS);
    expect(await viewerPage.getByRole('button', { name: /refresh/i }).count()).toBe(0);
    await expectAccessible(viewerPage, '/risk as a viewer');
  });
});

describe('fleet overview', { timeout: 60_000 }, () => {
  const ROWS = 'main table tbody tr[data-index]';

  it('Back from a cluster opened far down the list returns to where the list was', async () => {
    const page = await browser.page();
    await signIn(page, 'admin', PASSWORD);
    await open(page, '/', 'Fleet overview', ROWS);
    await page.evaluate('window.scrollTo(0, document.body.scrollHeight)');
    const scrolled = Number(await page.evaluate('window.scrollY'));
    expect(scrolled).toBeGreaterThan(0);
    await page.locator(ROWS).last().getByRole('link').first().click();
    await page.getByRole('heading', { level: 1 }).filter({ hasNotText: 'Fleet overview' }).waitFor();
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: 'Fleet overview' }).waitFor();
    // The table rendered no row until measured, and the position fell to the top of a page that short.
    await expect.poll(async () => Number(await page.evaluate('window.scrollY'))).toBe(scrolled);
    await page.close();
  });
  const count = (page: Page) => page.locator('.fleet-count').textContent();

  it('shows the API’s scores worst first, the refresh for admins only, and passes axe', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/fleet/scores');
    await open(adminPage, '/', 'Fleet overview', ROWS);
    expect(await adminPage.locator(`${ROWS} > td`).first().textContent()).toContain(body.scores[0].cluster_name);
    await expect.poll(() => count(adminPage)).toContain(`${body.scores.length} clusters.`);
    await adminPage.getByRole('button', { name: 'Refresh scores' }).waitFor();
    // The class tiles count by tier-adjusted score, not the Health page's metrics score nor the Risk page's risk levels with the same words.
    const kpis = (await api(service.url, admin, 'GET', '/api/fleet/kpis')).body.kpis;
    const note = adminPage.locator('#fleet-tiles-note');
    expect(await note.textContent()).toContain('Healthy, Warning and Critical count clusters by tier-adjusted score');
    expect(await note.textContent()).not.toContain('health score');
    expect(await note.textContent()).toContain('the Health page counts them by metrics alone');
    expect(await note.textContent()).toContain('the Risk page counts risk levels, set by the risk rules');
    // It names the rule set whose thresholds classify, as the Rules page names it (its tab), not one no page shows.
    expect(await note.textContent()).toContain("against the health rules' thresholds");
    expect(await adminPage.locator('.fleet-tiles .tile', { hasText: 'Warning' }).locator('dd').textContent()).toBe(String(kpis.warning_count));
    await expectAccessible(adminPage, '/ (fleet)');

    await open(viewerPage, '/', 'Fleet overview', ROWS);
    expect(await viewerPage.getByRole('button', { name: /refresh/i }).count()).toBe(0);
    await expectAccessible(viewerPage, '/ (fleet) as a viewer');
  });

  it('gives the columns that cut a long value with an ellipsis (region, type) its whole text as a tooltip', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/fleet/scores');
    await open(adminPage, '/', 'Fleet overview', ROWS);
    const worst = body.scores[0];
    const row = adminPage.locator(ROWS).first();
    expect(await row.locator('td').first().textContent()).toContain(worst.cluster_name);
    for (const value of [worst.region, worst.cluster_type]) expect(await row.locator(`td span[title="${value}"]`).count(), value).toBe(1);
  });

  it('breaks no column header inside a word at 1280 px: the sort mark goes under a label that fills its column', async () => {
    await atViewport(adminPage, { width: 1280, height: 800 }, async () => {
      await open(adminPage, '/', 'Fleet overview', ROWS);
      // Each word of each sortable header's label, and the lines its letters are on: one line per word.
      // (A string: the tests are compiled without the DOM's types.)
      const split = await adminPage.evaluate(`[...document.querySelectorAll('.data-table thead .sort-button')].flatMap((button) => {
        const text = [...button.childNodes].find((n) => n.nodeType === Node.TEXT_NODE);
        if (!text || !text.textContent) return [];
        return [...text.textContent.matchAll(/[^\\s-]+/g)].flatMap((word) => {
          const range = document.createRange();
          range.setStart(text, word.index);
          range.setEnd(text, word.index + word[0].length);
          const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
          return lines.size > 1 ? [word[0] + ' (' + button.textContent + ')'] : [];
        });
      })`);
      expect(split).toEqual([]);
      expect(await adminPage.locator('.data-table thead .sort-button').count()).toBeGreaterThan(8);
    });
  });

  it('fits the fleet, health and critical tables in a 1280-px window beside a classic scrollbar: no column cut off, no header cut', async () => {
    // Headless Chromium draws overlay scrollbars; a desktop's classic one takes 15 px, so the page is given 1,265.
    await atViewport(adminPage, { width: 1265, height: 800 }, async () => {
      const pages: [string, string, string][] = [
        ['/', 'Fleet overview', ROWS],
        ['/health', 'Health', 'table.health-table > tbody[data-index]'],
        ['/critical', 'Critical clusters', 'table tbody tr[data-index]'],
      ];
      for (const [path, heading, rows] of pages) {
        await open(adminPage, path, heading, rows);
        // Each table's overflow past its box, and each header whose text (its sort mark too) is wider than its cell;
        // a header holding only hidden text (the expander column's) is left out.
        const cut = await adminPage.evaluate(`[...document.querySelectorAll('main table')].flatMap((table) => {
          const out = [];
          const over = table.scrollWidth - table.parentElement.clientWidth;
          if (over > 0) out.push((table.querySelector('caption')?.textContent ?? 'a table') + ' wider than its box by ' + over + ' px');
          for (const th of table.querySelectorAll('thead th')) {
            if (!th.querySelector(':not(.visually-hidden)') && th.querySelector('.visually-hidden')) continue;
            const style = getComputedStyle(th);
            const room = th.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
            const range = document.createRange();
            range.selectNodeContents(th);
            if (range.getBoundingClientRect().width > room + 0.5) out.push('header ' + th.textContent.trim() + ' cut');
          }
          return out;
        })`);
        expect(cut, path).toEqual([]);
      }
    });
  });

  it('keeps the classification and search filters in the URL, and the same rows after a reload', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/fleet/scores');
    const worst = body.scores[0];
    const same = body.scores.filter((s: { classification: string }) => s.classification === worst.classification).length;
    await open(adminPage, '/', 'Fleet overview', ROWS);
    await adminPage.getByRole('checkbox', { name: worst.classification }).click(); // not check(): the box follows the URL, which the router updates a moment later
    await adminPage.waitForURL((u) => u.searchParams.get('classification')?.split(',').includes(worst.classification) ?? false);
    await expect.poll(() => count(adminPage)).toContain(`${same} of ${body.scores.length} clusters match.`);
    await adminPage.reload();
    await adminPage.locator(ROWS).first().waitFor();
    expect(await adminPage.getByRole('checkbox', { name: worst.classification }).isChecked()).toBe(true);
    await expect.poll(() => count(adminPage)).toContain(`${same} of ${body.scores.length} clusters match.`);

    await adminPage.getByLabel('Search').fill(worst.cluster_name);
    await adminPage.waitForURL((u) => u.searchParams.get('q') === worst.cluster_name);
    await adminPage.reload();
    await adminPage.locator(ROWS).first().waitFor();
    expect(await adminPage.getByLabel('Search').inputValue()).toBe(worst.cluster_name);
    expect(await adminPage.locator(ROWS).count()).toBe(1);
    expect(await adminPage.locator(`${ROWS} > td`).first().textContent()).toContain(worst.cluster_name);
  });

  it('opens at /fleet (its name in the navigation, typed as a path) and at /clusters, with the query kept', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/fleet/scores');
    const worst = body.scores[0];
    for (const path of ['/fleet', '/clusters']) {
      await adminPage.goto(`${path}?q=${encodeURIComponent(worst.cluster_name)}`);
      await adminPage.getByRole('heading', { level: 1, name: 'Fleet overview' }).waitFor();
      await adminPage.waitForURL((u) => u.pathname === '/' && u.searchParams.get('q') === worst.cluster_name);
      expect(await adminPage.getByLabel('Search').inputValue()).toBe(worst.cluster_name);
    }
  });

  it('keeps a filter clicked while the search box has yet to write what was typed', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/fleet/scores');
    const worst = body.scores[0];
    await open(adminPage, '/', 'Fleet overview', ROWS);
    // Typed, then a classification clicked at once: the box writes the text to the URL 200 ms after the typing.
    await adminPage.getByLabel('Search').fill(worst.cluster_name);
    await adminPage.getByRole('checkbox', { name: worst.classification }).click();
    await adminPage.waitForURL((u) => u.searchParams.get('q') === worst.cluster_name);
    await adminPage.waitForTimeout(300); // anything else the box would write has been written
    expect((new URL(adminPage.url()).searchParams.get('classification') ?? '(none)').split(',')).toContain(worst.classification);
    expect(await adminPage.getByRole('checkbox', { name: worst.classification }).isChecked()).toBe(true);
  });
});

describe('cluster', { timeout: 60_000 }, () => {
  it('shows the cluster the API describes, for a viewer too, and passes axe', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/fleet/scores');
    const { cluster_id: id, cluster_name: name } = body.scores[0];
    const record = await api(service.url, admin, 'GET', `/api/clusters/${encodeURIComponent(id)}`);
    expect(record.status).toBe(200);
    for (const page of [adminPage, viewerPage]) {
      await page.goto(`/clusters/${encodeURIComponent(id)}`);
      await page.getByRole('heading', { level: 1, name }).waitFor();
    }
    // It asks the fleet view for this cluster's items only: the whole answers weigh megabytes at 10,000 clusters.
    const VIEW_READS = ['/api/fleet/scores', '/api/health/scores', '/api/risk/snapshots'];
    const viewReads = new Set<string>();
    const noteViewRead = (request: { url(): string }) => {
      const url = new URL(request.url());
      if (VIEW_READS.includes(url.pathname)) viewReads.add(`${url.pathname}${url.search}`);
    };
    adminPage.on('request', noteViewRead);
    // The score tables scroll sideways: labelled, focusable regions (axe: scrollable-region-focusable).
    await adminPage.goto(`/clusters/${encodeURIComponent(id)}`);
    await adminPage.locator('.table-scroll').first().waitFor();
    await expect.poll(() => viewReads.size).toBeGreaterThanOrEqual(VIEW_READS.length);
    adminPage.off('request', noteViewRead);
    expect([...viewReads].sort()).toEqual(VIEW_READS.map((path) => `${path}?cluster_id=${id}`).sort());
    // The worst cluster's reasons and the health rules' actions, as the API gives them.
    const { risk_reasons: reasons, suggested_actions: actions } = body.scores[0];
    expect(reasons.length + actions.length).toBeGreaterThan(0);
    const why = adminPage.locator('.cluster-why');
    for (const [heading, items] of [
      ['Why', reasons],
      ['What to do', actions],
    ] as [string, string[]][]) {
      if (!items.length) continue;
      await why.getByRole('heading', { name: heading, exact: true }).waitFor();
      expect(await why.locator('h4', { hasText: heading }).locator('+ ul > li').allTextContents()).toEqual([...new Set(items)]);
    }
    await expectAccessible(adminPage, '/clusters/{id}');
    // A cluster that is not there is named as the other pages name theirs, in the heading and the tab.
    await adminPage.goto('/clusters/00000000-0000-4000-8000-000000000000');
    await adminPage.getByRole('heading', { level: 1, name: 'Cluster not found', exact: true }).waitFor();
    await expect.poll(() => adminPage.title()).toBe('Cluster not found · Fleet Health');
  });

  it('says a cluster that left the fleet by its state is not scored, and asks for no score', async () => {
    const gone = { ...newCluster(`gone-${randomUUID().slice(0, 8)}`, 'Gone Co'), resource_state: 'terminated' };
    expect((await api(service.url, service.ingestToken, 'POST', '/api/ingest/clusters', { clusters: [gone] })).body).toMatchObject({ accepted: 1 });
    const viewReads: string[] = [];
    const noteViewRead = (request: { url(): string }) => {
      const path = new URL(request.url()).pathname;
      if (['/api/fleet/scores', '/api/health/scores', '/api/risk/snapshots'].includes(path)) viewReads.push(path);
    };
    adminPage.on('request', noteViewRead);
    await adminPage.goto(`/clusters/${gone.cluster_id}`);
    await adminPage.getByRole('heading', { level: 1, name: gone.cluster_name }).waitFor();
    await adminPage.getByText('This cluster has left the fleet: its state is terminated.').waitFor();
    // Scores and risk say why there are none, rather than promise them at the next refresh.
    expect(await adminPage.getByText('Not scored: it has left the fleet (state terminated), and no view counts it.').count()).toBe(2);
    await adminPage.getByRole('heading', { name: 'Alert issues' }).waitFor();
    adminPage.off('request', noteViewRead);
    expect(viewReads).toEqual([]);
  });

  it('an edited window or page in the URL shows and asks for the default, not a window the select does not offer', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/fleet/scores');
    const asked = (path: string) =>
      adminPage.waitForRequest((r) => new URL(r.url()).pathname === path && r.method() === 'GET').then((r) => new URL(r.url()).searchParams);
    const [issues, investigations] = [asked('/api/issues'), asked('/api/investigations')];
    await adminPage.goto(`/clusters/${encodeURIComponent(body.scores[0].cluster_id)}?issue_days=abc&investigation_days=400`);
    expect((await issues).get('days')).toBe('30');
    expect((await investigations).get('days')).toBe('30');
    expect(await adminPage.getByLabel(/^Issues seen in the last/).inputValue()).toBe('30');
    expect(await adminPage.getByLabel('Investigations in the last').inputValue()).toBe('30');
    await adminPage
      .getByRole('heading', { name: /^Open \(/ })
      .first()
      .waitFor(); // answered, not a problem
    // A page past what a number holds exactly: the first page, which the service answers (it would refuse that one).
    const page = asked('/api/issues');
    await adminPage.goto('/issues?page=99999999999999999999');
    expect((await page).get('page')).toBe('1');
    await adminPage.getByRole('heading', { level: 1, name: 'Alert issues' }).waitFor();
    expect(await adminPage.locator('.state.problem').count()).toBe(0);
  });
  it('lists only its own alert issues when another customer has a cluster of the same name', async () => {
    const name = `prod-${randomUUID().slice(0, 8)}`;
    const [ours, theirs] = [newCluster(name, 'Ours Co'), newCluster(name, 'Theirs Co')];
    expect((await api(service.url, service.ingestToken, 'POST', '/api/ingest/clusters', { clusters: [ours, theirs] })).body).toEqual({
      accepted: 2,
      rejected: [],
    });
    await fire([ours.cluster_id, 'Twin-Ours'], [theirs.cluster_id, 'Twin-Theirs']);

    await adminPage.goto(`/clusters/${encodeURIComponent(ours.cluster_id)}`);
    await adminPage.getByRole('heading', { level: 1, name }).waitFor();
    const section = adminPage.getByRole('region', { name: 'Alert issues' });
    await section.getByRole('link', { name: /Twin-Ours/ }).waitFor();
    expect(await section.locator('tbody th').allTextContents()).toEqual([expect.stringContaining('Twin-Ours')]);
    const link = new URL((await section.getByRole('link', { name: 'Open in the issues list' }).getAttribute('href')) ?? '', service.url);
    expect(Object.fromEntries(link.searchParams)).toMatchObject({ cluster: name, customer: 'Ours Co' });
  });
});

/**
 * Alertmanager alerts named `name` of one cluster, one per instance (node-0, node-1, …), all of one evaluation: begun
 * `startedMinutesAgo`, and when resolved, ended `endedMinutesAgo`.
 */
function instanceAlert(clusterId: string, name: string, startedMinutesAgo: number, endedMinutesAgo: number) {
  const startsAt = new Date(Date.now() - startedMinutesAgo * 60_000).toISOString();
  const endsAt = new Date(Date.now() - endedMinutesAgo * 60_000).toISOString();
  return (instance: number, status: 'firing' | 'resolved') => ({
    status,
    labels: { alertname: name, cluster_id: clusterId, severity: 'warning', instance: `node-${instance}` },
    annotations: {},
    startsAt,
    ...(status === 'resolved' ? { endsAt } : {}),
    fingerprint: `${clusterId}-${name.toLowerCase()}-${instance}`,
  });
}
const ingestAlerts = (alerts: object[]) => api(service.url, service.ingestToken, 'POST', '/api/ingest/alerts', { version: '4', alerts });

describe("an issue's alert timeline", { timeout: 60_000 }, () => {
  it('follows a change to one of several alerts of one evaluation (same name and times) when the issue is read again', async () => {
    const cluster = newCluster(`storm-${randomUUID().slice(0, 8)}`, 'Storm Co');
    expect((await api(service.url, service.ingestToken, 'POST', '/api/ingest/clusters', { clusters: [cluster] })).body).toMatchObject({ accepted: 1 });
    const alert = instanceAlert(cluster.cluster_id, 'Storm', 30, 1);
    expect((await ingestAlerts([0, 1, 2].map((i) => alert(i, 'firing')))).body).toMatchObject({ accepted: 3 });
    const { body } = await api(service.url, admin, 'GET', `/api/issues?cluster=${encodeURIComponent(cluster.cluster_name)}`);
    const id: string = body.issues[0].issue_id;
    await adminPage.goto(`/issues/${encodeURIComponent(id)}`);
    const entries = adminPage.locator('.issue-timeline li');
    await expect.poll(() => entries.count()).toBe(3);
    await ingestAlerts([alert(1, 'resolved')]);
    // read again (a saved triage reads the issue anew): one entry resolved, none left behind as a firing ghost
    const read = adminPage.waitForResponse((r) => r.request().method() === 'GET' && new URL(r.url()).pathname === `/api/issues/${id}`);
    await adminPage.getByLabel('Notes').fill('read it again');
    await adminPage.getByRole('button', { name: 'Save triage' }).click();
    await read;
    await expect.poll(async () => (await entries.locator('.badge').allTextContents()).sort()).toEqual(['Firing', 'Firing', 'Resolved']);
  });
});

describe('an issue whose alerts have all ended', { timeout: 60_000 }, () => {
  it('says why it is still Ongoing (the quiet period), and stops saying so once an alert fires again', async () => {
    const cluster = newCluster(`calm-${randomUUID().slice(0, 8)}`, 'Calm Co');
    expect((await api(service.url, service.ingestToken, 'POST', '/api/ingest/clusters', { clusters: [cluster] })).body).toMatchObject({ accepted: 1 });
    const alert = instanceAlert(cluster.cluster_id, 'Calm', 20, 2);
    expect((await ingestAlerts([alert(0, 'resolved'), alert(1, 'resolved')])).body).toMatchObject({ accepted: 2 });
    const { body } = await api(service.url, admin, 'GET', `/api/issues?cluster=${encodeURIComponent(cluster.cluster_name)}`);
    // Within the shipped quiet period (30 minutes) the issue is Ongoing, though every alert has ended.
    expect(body.issues[0]).toMatchObject({ status: 'Ongoing', resolved_at: null });
    const id: string = body.issues[0].issue_id;
    await viewerPage.goto(`/issues/${encodeURIComponent(id)}`);
    await viewerPage.getByRole('heading', { level: 1, name: 'Calm' }).waitFor();
    const note = viewerPage.getByRole('note').filter({ hasText: 'Every alert has ended' });
    await note.waitFor();
    expect(await note.getByRole('link', { name: 'issue rules' }).getAttribute('href')).toBe('/rules?set=issue');
    const stored = (await api(service.url, admin, 'GET', `/api/issues/${encodeURIComponent(id)}`)).body.alerts as { ends_at: string }[];
    expect(await note.locator('time').getAttribute('datetime')).toBe(stored[0]!.ends_at);
    await expectAccessible(viewerPage, '/issues/{id} with every alert ended');
    // Each alert's end to the second, as its start: "20:25:30" then "ended 20:40" read as ends of another precision.
    const times = await viewerPage.locator('.issue-timeline-head time').evaluateAll((ts) => ts.map((t) => [t.getAttribute('datetime') ?? '', t.textContent]));
    expect(times).toHaveLength(4);
    for (const [iso, text] of times) expect(text).toBe(`${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`);
    // One firing again: nothing to explain, the issue is plainly Ongoing; what resolves it is said beside "not yet".
    await ingestAlerts([alert(1, 'firing')]);
    await viewerPage.reload();
    await viewerPage.locator('.issue-timeline li .badge', { hasText: 'Firing' }).first().waitFor();
    expect(await viewerPage.getByText('Every alert has ended').count()).toBe(0);
    await viewerPage
      .locator('.issue-summary dd')
      .getByText("not yet: it resolves when its alerts have all ended and the issue rules' quiet period has passed (triage does not resolve it)")
      .waitFor();
  });
});

describe('an issue alerted again after its triage', { timeout: 60_000 }, () => {
  it('says so beside its triage while it is Ongoing: a Closed issue reopened by a new alert read as settled', async () => {
    const cluster = newCluster(`retriage-${randomUUID().slice(0, 8)}`, 'Retriage Co');
    expect((await api(service.url, service.ingestToken, 'POST', '/api/ingest/clusters', { clusters: [cluster] })).body).toMatchObject({ accepted: 1 });
    const name = `Retriage-${randomUUID().slice(0, 8)}`;
    await fire([cluster.cluster_id, name, 30]);
    const id = await issueIdOf(name);
    const triaged = await api(service.url, admin, 'PATCH', `/api/issues/${encodeURIComponent(id)}`, {
      triage_status: 'Closed',
      disposition_status: 'Not actionable',
    });
    expect(triaged.status).toBe(200);
    const note = viewerPage.locator('.issue-summary .issue-retriage');
    await viewerPage.goto(`/issues/${encodeURIComponent(id)}`);
    await viewerPage.getByRole('heading', { level: 1, name }).waitFor();
    await viewerPage.locator('.issue-summary dd').getByText('Closed', { exact: true }).waitFor();
    expect(await note.count()).toBe(0); // triaged after its alert started: nothing newer
    // A new occurrence of the alert (a later start) joins the issue after its triage.
    await fire([cluster.cluster_id, name, 0]);
    const issue = (await api(service.url, admin, 'GET', `/api/issues/${encodeURIComponent(id)}`)).body.issue;
    expect(issue).toMatchObject({ status: 'Ongoing', triage_status: 'Closed' });
    expect(Date.parse(issue.last_seen)).toBeGreaterThan(Date.parse(issue.updated_at));
    await viewerPage.reload();
    await note.waitFor();
    expect(await note.textContent()).toMatch(/^An alert started after the last triage \(at .+ UTC\): check this triage again\.$/);
    expect(await note.locator('time').getAttribute('datetime')).toBe(issue.last_seen);
    await expectAccessible(viewerPage, '/issues/{id} alerted after its triage');
  });
});

describe("an issue's triage form by keyboard", { timeout: 60_000 }, () => {
  it('keeps the focus on Discard changes after discarding, instead of dropping it to the top of the page', async () => {
    const id = await issueOfNewCluster('keys', 'Keys Co', 'KeysAlert');
    await adminPage.goto(`/issues/${encodeURIComponent(id)}`);
    await adminPage.getByRole('heading', { level: 1, name: 'KeysAlert' }).waitFor();
    const notes = adminPage.getByLabel('Notes');
    await notes.fill('not what I meant');
    const discard = adminPage.getByRole('button', { name: 'Discard changes' });
    await discard.focus();
    await adminPage.keyboard.press('Enter');
    await expect.poll(() => notes.inputValue()).toBe('');
    // The focus stays where the keyboard user was: on the (now dimmed) button, not on the page's body.
    expect(await adminPage.evaluate('document.activeElement?.textContent')).toBe('Discard changes');
    expect(await discard.getAttribute('aria-disabled')).toBe('true');
    // Dimmed, it does nothing; an edit makes it act again.
    await adminPage.keyboard.press('Enter');
    await notes.fill('second thought');
    expect(await discard.getAttribute('aria-disabled')).toBeNull();
  });
});

describe('linking a ticket by keyboard', { timeout: 60_000 }, () => {
  it('moves the focus to "Linked …" once the form that did it is gone, not to the top of the page', async () => {
    const id = await issueOfNewCluster('link', 'Link Co', 'LinkAlert');
    await adminPage.goto(`/issues/${encodeURIComponent(id)}`);
    await adminPage.getByRole('heading', { level: 1, name: 'LinkAlert' }).waitFor();
    await adminPage.getByText('Link an existing ticket').click();
    // Two keys run together are held back before sending, saying what a key is (the service would refuse them).
    await adminPage.getByLabel('Ticket key').fill('OPS-7 OPS-8');
    expect(
      await adminPage
        .getByLabel('Ticket key')
        .evaluate((e) => [(e as unknown as { validity: { patternMismatch: boolean } }).validity.patternMismatch, e.getAttribute('title')]),
    ).toEqual([true, 'One ticket key, with no spaces (such as OPS-42)']);
    await adminPage.getByLabel('Ticket key').fill('OPS-7');
    await adminPage.getByLabel('Ticket key').press('Enter');
    await adminPage.getByRole('status').filter({ hasText: 'Linked OPS-7.' }).waitFor();
    expect((await api(service.url, admin, 'GET', `/api/issues/${encodeURIComponent(id)}`)).body.issue.ticket_key).toBe('OPS-7');
    // The key field went with the form; the focus is on what was done.
    await expect.poll(() => adminPage.evaluate('document.activeElement?.textContent')).toBe('Linked OPS-7.');
  });
});

describe("a cluster's alert issues", { timeout: 90_000 }, () => {
  it('counts an issue firing for weeks as open behind more than a page of newer resolved ones, and links to the rest', async () => {
    const cluster = newCluster(`busy-${randomUUID().slice(0, 8)}`, 'Busy Co');
    expect((await api(service.url, service.ingestToken, 'POST', '/api/ingest/clusters', { clusters: [cluster] })).body).toMatchObject({ accepted: 1 });
    // 101 issues that started and ended two days ago, and one firing for 20 days: the list orders by the latest
    // alert's start, so a page of 100 of both would hold only resolved ones.
    const ended = (n: number) => {
      const startsAt = new Date(Date.now() - 2 * 86_400_000 + n * 60_000);
      return {
        status: 'resolved',
        labels: { alertname: `Flap${n}`, cluster_id: cluster.cluster_id, severity: 'warning' },
        annotations: {},
        startsAt: startsAt.toISOString(),
        endsAt: new Date(startsAt.getTime() + 300_000).toISOString(),
        fingerprint: `${cluster.cluster_id}-flap-${n}`,
      };
    };
    const alerts = [...Array.from({ length: 101 }, (_, n) => ended(n))];
    expect((await api(service.url, service.ingestToken, 'POST', '/api/ingest/alerts', { version: '4', alerts })).body).toMatchObject({ accepted: 101 });
    await fire([cluster.cluster_id, 'DiskFilling', 20 * 24 * 60]);

    await adminPage.goto(`/clusters/${encodeURIComponent(cluster.cluster_id)}`);
    const section = adminPage.getByRole('region', { name: 'Alert issues' });
    await section.getByRole('heading', { name: 'Open (1)' }).waitFor();
    expect(await section.getByRole('table', { name: 'Open alert issues' }).locator('tbody th').allTextContents()).toEqual([
      expect.stringContaining('DiskFilling'),
    ]);
    await section.getByRole('heading', { name: 'Past (101)' }).waitFor();
    expect(await section.getByRole('table', { name: 'Past alert issues' }).locator('tbody tr').count()).toBe(100);
    expect(await section.getByText('Showing the latest 100 of 101').count()).toBe(1);
    const rest = new URL((await section.getByRole('link', { name: 'the list has them all' }).getAttribute('href')) ?? '', service.url);
    expect(Object.fromEntries(rest.searchParams)).toMatchObject({ cluster: cluster.cluster_name, customer: 'Busy Co', status: 'Resolved' });
  });
});

describe('back links', { timeout: 60_000 }, () => {
  const href = (page: Page, name: string) => page.getByRole('link', { name, exact: true }).getAttribute('href');

  it("an issue's and a cluster's lead back to the list with the filters it was left with; opened directly, to the plain list", async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/issues');
    const issue = body.issues[0];
    const list = `/issues?severities=${issue.severity}&days=90`;
    await adminPage.goto(list);
    await adminPage.getByRole('main').getByRole('link', { name: issue.issue_name }).first().click();
    await adminPage.getByRole('heading', { level: 1, name: issue.issue_name }).waitFor();
    expect(await href(adminPage, '← Alert issues')).toBe(list);
    await adminPage.reload(); // the way back is kept with the history entry
    await adminPage.getByRole('heading', { level: 1, name: issue.issue_name }).waitFor();
    await adminPage.getByRole('link', { name: '← Alert issues', exact: true }).click();
    await adminPage.waitForURL((u) => u.pathname + u.search === list);
    expect(await adminPage.getByRole('checkbox', { name: issue.severity }).isChecked()).toBe(true);
    await adminPage.goto(`/issues/${encodeURIComponent(issue.issue_id)}`);
    await adminPage.getByRole('heading', { level: 1, name: issue.issue_name }).waitFor();
    expect(await href(adminPage, '← Alert issues')).toBe('/issues');

    const scores = (await api(service.url, admin, 'GET', '/api/fleet/scores')).body.scores;
    const cluster = scores[0];
    const fleet = `/?classification=${cluster.classification}&q=${encodeURIComponent(cluster.cluster_name)}`;
    await adminPage.goto(fleet);
    await adminPage.getByRole('main').getByRole('link', { name: cluster.cluster_name, exact: true }).click();
    await adminPage.getByRole('heading', { level: 1, name: cluster.cluster_name }).waitFor();
    const crumbs = adminPage.getByRole('navigation', { name: 'Breadcrumb' });
    expect(await crumbs.getByRole('link', { name: 'Fleet' }).getAttribute('href')).toBe(fleet);
    await crumbs.getByRole('link', { name: 'Fleet' }).click();
    await adminPage.waitForURL((u) => u.pathname + u.search === fleet);
    await adminPage.goto(`/clusters/${encodeURIComponent(cluster.cluster_id)}`);
    await adminPage.getByRole('heading', { level: 1, name: cluster.cluster_name }).waitFor();
    expect(await crumbs.getByRole('link', { name: 'Fleet' }).getAttribute('href')).toBe('/');
  });
  it('an issue opened from another issue (its cluster history) leads back to the list the first one was opened from', async () => {
    const cluster = newCluster(`hop-${randomUUID().slice(0, 8)}`, 'Hop Co');
    expect((await api(service.url, service.ingestToken, 'POST', '/api/ingest/clusters', { clusters: [cluster] })).body).toMatchObject({ accepted: 1 });
    const [nameA, nameB] = [`Hop-A-${randomUUID().slice(0, 8)}`, `Hop-B-${randomUUID().slice(0, 8)}`];
    await fire([cluster.cluster_id, nameA], [cluster.cluster_id, nameB]);
    await Promise.all([issueIdOf(nameA), issueIdOf(nameB)]);
    const list = `/issues?cluster=${cluster.cluster_name}&days=30`;
    const opened = async (name: string) => {
      await adminPage.getByRole('heading', { level: 1, name }).waitFor();
      await adminPage.locator('section.issue-history tbody tr').first().waitFor();
    };

    await adminPage.goto(list);
    await adminPage.getByRole('main').getByRole('link', { name: nameA }).first().click();
    await opened(nameA);
    expect(await href(adminPage, '← Alert issues')).toBe(list);
    // A → B → A through the cluster history: each keeps the way back to the filtered list, across a reload too.
    await adminPage.locator('section.issue-history').getByRole('link', { name: nameB }).click();
    await opened(nameB);
    expect(await href(adminPage, '← Alert issues')).toBe(list);
    await adminPage.reload();
    await opened(nameB);
    await adminPage.locator('section.issue-history').getByRole('link', { name: nameA }).click();
    await opened(nameA);
    expect(await href(adminPage, '← Alert issues')).toBe(list);
    await adminPage.getByRole('link', { name: '← Alert issues', exact: true }).click();
    await adminPage.waitForURL((u) => u.pathname + u.search === list);

    // Opened from its cluster's page (not the issues list), an issue's back link is the plain list.
    await adminPage.goto(`/clusters/${encodeURIComponent(cluster.cluster_id)}`);
    await adminPage.getByRole('region', { name: 'Alert issues' }).getByRole('link', { name: nameB }).click();
    await opened(nameB);
    expect(await href(adminPage, '← Alert issues')).toBe('/issues');
  });
});

describe('times', { timeout: 60_000 }, () => {
  /** `iso` as the console writes it: UTC to the minute (`to` 19: the second), labelled "UTC". */
  const inUtc = (iso: string, to = 16) => `${new Date(iso).toISOString().slice(0, to).replace('T', ' ')} UTC`;

  it('the fleet and cluster pages write every time in UTC, labelled, in a browser in New York', async () => {
    const { cluster_id: id, cluster_name: name } = (await api(service.url, admin, 'GET', '/api/fleet/scores')).body.scores[0];
    const alert = `Zone-${randomUUID().slice(0, 8)}`;
    // Firing for 2.5 hours: its duration is written as the issues pages write it.
    await fire([id, alert, 150]);
    const [issue] = (await api(service.url, admin, 'GET', `/api/issues?search=${alert}`)).body.issues;
    const { cluster } = (await api(service.url, admin, 'GET', `/api/clusters/${encodeURIComponent(id)}`)).body;

    const page = await browser.page();
    await (await page.context().newCDPSession(page)).send('Emulation.setTimezoneOverride', { timezoneId: 'America/New_York' });
    await signIn(page, 'admin', PASSWORD, '/');
    expect(await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone')).toBe('America/New_York');

    // The fleet's "Scores computed", to the second.
    await page.getByRole('heading', { level: 1, name: 'Fleet overview' }).waitFor();
    const computed = page.locator('.fleet-stamp time');
    await computed.waitFor();
    expect(await computed.textContent()).toBe(inUtc((await computed.getAttribute('datetime'))!, 19));

    // The cluster's inventory facts, its scores' "Computed" stamps and its issues' first and last seen.
    await page.goto(`/clusters/${encodeURIComponent(id)}`);
    await page.getByRole('heading', { level: 1, name }).waitFor();
    const fact = (label: string) =>
      page
        .locator('.cluster-fact')
        .filter({ has: page.getByText(label, { exact: true }) })
        .locator('dd');
    expect(await fact('First seen').textContent()).toBe(inUtc(cluster.created_at));
    expect(await fact('Inventory updated').textContent()).toBe(inUtc(cluster.updated_at));
    const stamps = page.getByRole('region', { name: 'Scores', exact: true }).locator('.view-stamp time');
    await stamps.first().waitFor();
    for (const stamp of await stamps.all()) expect(await stamp.textContent()).toBe(inUtc((await stamp.getAttribute('datetime'))!));
    const table = page
      .getByRole('region', { name: 'Alert issues' })
      .locator('table')
      .filter({ has: page.getByRole('link', { name: alert }) });
    const cells = table
      .getByRole('row')
      .filter({ has: page.getByRole('link', { name: alert }) })
      .locator('td');
    // The column header says UTC; the cells are the time alone.
    expect(await cells.nth(2).textContent()).toBe(inUtc(issue.first_seen).replace(' UTC', ''));
    expect(await cells.nth(3).textContent()).toBe(inUtc(issue.last_seen).replace(' UTC', ''));
    expect(await table.locator('thead th').allTextContents()).toEqual(expect.arrayContaining(['First seen (UTC)', 'Last seen (UTC)']));
    // Counted to the page's own now: hours and minutes, as the issues pages write it (not "2.5 h").
    expect(await cells.nth(4).textContent()).toMatch(/^2 h \d{1,2} min$/);
    await expectAccessible(page, '/clusters/{id} in New York');
  });
});

describe('numbers', { timeout: 60_000 }, () => {
  const en = (v: number, digits: { min?: number; max: number }) =>
    new Intl.NumberFormat('en', { minimumFractionDigits: digits.min ?? 0, maximumFractionDigits: digits.max }).format(v);

  it('the fleet, cluster and issue evidence pages write every number in English in a German browser, as the cost pages do', async () => {
    const { cluster_id: id } = (await api(service.url, admin, 'GET', '/api/fleet/scores')).body.scores[0];
    const alert = `Locale-${randomUUID().slice(0, 8)}`;
    await fire([id, alert]);
    const issueId = await issueIdOf(alert);
    const { cluster_name: name } = (await api(service.url, admin, 'GET', '/api/fleet/scores')).body.scores.find(
      (s: { cluster_id: string }) => s.cluster_id === id,
    );

    const page = await browser.page({ locale: 'de-DE' });
    // Each figure is compared with the answer the page itself was given: the fleet's scores move on (the alert above,
    // the schedules), so a figure read from the API beside the page can differ from the one the page shows.
    const answers = new Map<string, any>();
    page.on('response', (r) => {
      if (r.request().method() !== 'GET' || !r.ok() || !new URL(r.url()).pathname.startsWith('/api/')) return;
      r.json().then(
        (body) => answers.set(new URL(r.url()).pathname, body),
        () => undefined,
      );
    });
    const shows = async (figure: { textContent(): Promise<string | null> }, path: string, expected: (answer: any) => string) => {
      const answer = answers.get(path);
      if (answer === undefined) return `no answer from ${path} yet`;
      const shown = await figure.textContent();
      return shown === expected(answer) ? 'as answered' : `shows ${shown}, answered ${expected(answer)}`;
    };
    await signIn(page, 'admin', PASSWORD, '/');
    expect(await page.evaluate('navigator.language')).toBe('de-DE');

    // The fleet's average score tile: one decimal, a point (German: "45,2").
    await page.getByRole('heading', { level: 1, name: 'Fleet overview' }).waitFor();
    const average = page
      .locator('.fleet-tiles .tile')
      .filter({ has: page.getByText('Average score', { exact: true }) })
      .locator('dd');
    await expect.poll(() => shows(average, '/api/fleet/kpis', (a) => en(a.kpis.avg_score, { min: 1, max: 1 }))).toBe('as answered');
    expect.soft(await average.textContent()).toContain('.');

    // A view's figure (components/views/common.tsx): the cluster page's tier-adjusted score.
    answers.clear();
    await page.goto(`/clusters/${encodeURIComponent(id)}`);
    await page.getByRole('heading', { level: 1, name }).waitFor();
    const tierAdjusted = page.locator('.cluster-subscores li').filter({ hasText: 'Tier-adjusted' }).locator('strong');
    const tierAdjustedOf = (a: any) => en(a.scores.find((s: { cluster_id: string }) => s.cluster_id === id).tier_adjusted_score, { min: 1, max: 1 });
    await expect.poll(() => shows(tierAdjusted, '/api/fleet/scores', tierAdjustedOf)).toBe('as answered');

    // The evidence's key metrics: a value with decimals, and the samples counted (a point, a comma: never the German marks).
    answers.clear();
    const evidencePath = `/api/issues/${encodeURIComponent(issueId)}/evidence`;
    await page.goto(`/issues/${encodeURIComponent(issueId)}`);
    const metrics = page.locator('section.issue-evidence').getByRole('region', { name: 'Key metrics of today and yesterday (UTC)' });
    await metrics.locator('tbody tr').first().waitFor();
    await expect.poll(() => answers.has(evidencePath)).toBe(true);
    const withDecimals = (answers.get(evidencePath).metrics as { metric_key: string; avg: number; samples: number }[]).find(
      (m) => !Number.isInteger(m.avg) && Math.abs(m.avg) < 1e6,
    );
    expect(withDecimals).toBeDefined();
    const row = metrics.locator('tbody tr').filter({ has: page.locator(`span[title="${withDecimals!.metric_key}"]`) });
    const cells = row.locator('td');
    const metricOf = (a: any) => a.metrics.find((m: { metric_key: string }) => m.metric_key === withDecimals!.metric_key);
    await expect.poll(() => shows(cells.nth(2), evidencePath, (a) => en(metricOf(a).avg, { max: 2 }))).toBe('as answered');
    expect.soft(await cells.nth(2).textContent()).toContain('.');
    await expect.poll(() => shows(cells.nth(4), evidencePath, (a) => en(metricOf(a).samples, { max: 0 }))).toBe('as answered');
  });

  it('the cluster page writes its counts with thousands separators, in a German browser too (1,234, never "1234" or "1.234")', async () => {
    // Counts of 1,000 or more from the service's own answers, raised on their way to this page only: a cluster with
    // 1,234 alerts in 7 days and 1,500 open issues would take minutes of ingest to build.
    const { cluster_id: id, cluster_name: name } = (await api(service.url, admin, 'GET', '/api/fleet/scores')).body.scores[0];
    const page = await browser.page({ locale: 'de-DE' });
    await signIn(page, 'admin', PASSWORD);
    // The page asks for its own cluster's item (`?cluster_id=`), which a glob of the path alone does not match.
    await page.route(
      (url) => url.pathname === '/api/fleet/scores',
      async (route) => {
        const answer = await (await route.fetch()).json();
        for (const s of answer.scores) if (s.cluster_id === id) s.firing_alert_count_7d = 1234;
        await route.fulfill({ json: answer });
      },
    );
    await page.route(
      (url) => url.pathname === '/api/issues' && url.searchParams.get('status') === 'Ongoing' && url.searchParams.get('cluster_id') === id,
      async (route) => {
        const answer = await (await route.fetch()).json();
        answer.total = 1500;
        await route.fulfill({ json: answer });
      },
    );
    await page.goto(`/clusters/${encodeURIComponent(id)}`);
    await page.getByRole('heading', { level: 1, name }).waitFor();
    const alerts = page.locator('.cluster-subscores li').filter({ hasText: 'fired in the last 7 days' });
    await expect.poll(() => alerts.textContent()).toContain('(1,234 fired in the last 7 days)');
    const open = page.getByRole('heading', { level: 3, name: /^Open \(/ }).first();
    await expect.poll(() => open.textContent()).toBe('Open (1,500)');
    await expect
      .poll(() =>
        page
          .getByText(/^Showing the latest \d+ of /)
          .first()
          .textContent(),
      )
      .toMatch(/of 1,500;/);
  });

  it("the health page writes a dimension's thresholds as figures, as the cluster page does (1,000, not the description's 1000)", async () => {
    // The demo fleet's own data: Compaction Score's thresholds are written "green 100, yellow 500, red 1000" in the description.
    const { scores } = (await api(service.url, admin, 'GET', '/api/health/scores')).body;
    const big = (d: { description: string }) => / red \d{4,}/.test(d.description);
    const cluster = (scores as { cluster_name: string; dimension_scores: { name: string; description: string }[] }[]).find((c) => c.dimension_scores.some(big));
    expect(cluster).toBeDefined();
    const dimension = cluster!.dimension_scores.find(big)!;
    const [, green, yellow, red] = /green (\S+), yellow (\S+), red (\S+) /.exec(dimension.description)!;
    const written = [green, yellow, red].map((v) => en(Number(v), { max: 2 })).join(' · ');
    expect(written).toMatch(/\d,\d{3}/);
    const page = await browser.page({ locale: 'de-DE' });
    await signIn(page, 'admin', PASSWORD, `/health?q=${encodeURIComponent(cluster!.cluster_name)}`);
    await page.getByRole('button', { name: `Dimensions of ${cluster!.cluster_name}`, exact: true }).click();
    const row = page
      .getByRole('table', { name: `Dimensions of ${cluster!.cluster_name}` })
      .getByRole('row')
      .filter({ hasText: dimension.name });
    await expect.poll(() => row.locator('td').filter({ hasText: ' · ' }).first().textContent()).toContain(written);
  });
});

describe('critical clusters and analysis', { timeout: 60_000 }, () => {
  it('critical shows the API’s most severe cluster, and passes axe', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/critical-clusters');
    await adminPage.goto('/critical');
    await adminPage.getByRole('heading', { level: 1, name: 'Critical clusters' }).waitFor();
    if (body.clusters.length > 0) {
      await adminPage.getByRole('link', { name: body.clusters[0].cluster_name }).first().waitFor();
      // Its score is the unified one (metrics and alerts), named so: the cluster and Health pages' "Health score" is metrics only.
      expect(await adminPage.locator('.critical-card .critical-health').first().textContent()).toContain(
        `Unified score ${body.clusters[0].health.overall_score.toFixed(1)} `,
      );
    }
    await expectAccessible(adminPage, '/critical');
  });

  it("critical's fleet list renders only the rows in view of a long list (virtualised); scrolling reaches the last", async () => {
    // 600 rows: the service's own answer, each cluster repeated under new ids (this page only), so the test stays fast.
    const COPIES = 50;
    const { body } = await api(service.url, admin, 'GET', '/api/fleet/critical');
    expect(body.clusters.length).toBeGreaterThan(0);
    const page = await browser.page();
    await signIn(page, 'admin', PASSWORD);
    // What the page was served, not the read above: a scheduled recompute between the two may move a cluster in or out.
    let served: { cluster_name: string }[] = [];
    await page.route('**/api/fleet/critical', async (route) => {
      const answer = await (await route.fetch()).json();
      const clusters = answer.clusters as { cluster_id: string; cluster_name: string }[];
      answer.clusters = Array.from({ length: COPIES }, (_, copy) =>
        clusters.map((c) => ({ ...c, cluster_id: `${c.cluster_id}-${copy}`, cluster_name: `${c.cluster_name}-${copy}` })),
      ).flat();
      answer.total = answer.clusters.length;
      served = answer.clusters;
      await route.fulfill({ json: answer });
    });
    const table = page.getByRole('region', { name: 'Warning and Critical clusters by unified score, worst first' });
    await page.goto('/critical');
    await table.locator('tbody tr[data-index]').first().waitFor();
    await page.getByText(`${served.length} clusters`, { exact: true }).waitFor();
    const rendered = () => table.locator('tbody tr[data-index]').count();
    expect(await rendered()).toBeLessThan(60);
    const lastName = served.at(-1)!.cluster_name;
    await table.evaluate((region) => {
      region.scrollTop = region.scrollHeight;
    });
    await table.getByRole('link', { name: lastName, exact: true }).waitFor();
    expect(await rendered()).toBeLessThan(60);
    expect(await table.getByRole('rowheader', { name: lastName, exact: true }).count()).toBe(1);
    await expectAccessible(page, '/critical with 600 clusters listed, scrolled to the end');
  });

  it("the fleet, health and critical pages take a link's class or level in any case; one their controls cannot show filters nothing", async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/fleet/scores');
    const critical = body.scores.filter((s: { classification: string }) => s.classification === 'Critical').length;
    expect(critical).toBeGreaterThan(0);
    await open(adminPage, '/?classification=critical', 'Fleet overview', 'main table tbody tr[data-index]');
    expect(await adminPage.getByRole('checkbox', { name: 'Critical' }).isChecked()).toBe(true);
    await expect.poll(() => adminPage.locator('.fleet-count').textContent()).toContain(`${critical} of ${body.scores.length} clusters match.`);

    await open(adminPage, '/health?class=CRITICAL&type=nope&region=nowhere', 'Health', 'table.health-table > tbody > tr');
    expect(await adminPage.getByLabel('Classification').inputValue()).toBe('Critical');
    await expect.poll(() => adminPage.getByLabel('Cluster type').locator('option').count()).toBeGreaterThan(1); // the inventory is read
    expect(await adminPage.getByLabel('Cluster type').inputValue()).toBe('');
    expect(await adminPage.getByRole('combobox', { name: /^Region/ }).inputValue()).toBe('');
    const health = (await api(service.url, admin, 'GET', '/api/health/scores')).body.scores;
    const criticalNames = health
      .filter((s: { classification: string }) => s.classification === 'Critical')
      .map((s: { cluster_name: string }) => s.cluster_name);
    await expect.poll(() => adminPage.locator('table.health-table > tbody > tr > th').allTextContents()).toEqual(criticalNames);
    // Scores with one decimal, as the fleet page writes them: 36.0 beside 45.2, not 36.
    for (const score of await adminPage.locator('table.health-table > tbody > tr > td.num').allTextContents()) expect(score).toMatch(/^\d{1,3}\.\d$/);

    await adminPage.goto('/critical?level=bogus');
    await adminPage.getByRole('heading', { level: 1, name: 'Critical clusters' }).waitFor();
    expect(await adminPage.getByLabel('Level').inputValue()).toBe('');
    await adminPage.goto('/critical?level=warning');
    await adminPage.getByRole('heading', { level: 1, name: 'Critical clusters' }).waitFor();
    expect(await adminPage.getByLabel('Level').inputValue()).toBe('Warning');
  });

  it('analysis shows the fleet’s clusters, and passes axe', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/fleet/scores');
    await adminPage.goto('/analysis');
    await adminPage.getByRole('heading', { level: 1, name: 'Analysis' }).waitFor();
    await expect
      .poll(async () => {
        const text = (await adminPage.locator('main').textContent()) ?? '';
        return body.scores.some((s: { cluster_name: string }) => text.includes(s.cluster_name));
      })
      .toBe(true);
    await expectAccessible(adminPage, '/analysis');
    // A full load logs nothing of the router's in the browser's console (it warned of a missing HydrateFallback on every load).
    const logged: string[] = [];
    const listen = (m: { type(): string; text(): string }) => void (['warning', 'error'].includes(m.type()) && logged.push(m.text()));
    adminPage.on('console', listen);
    try {
      await adminPage.reload();
      await adminPage.getByRole('heading', { level: 1, name: 'Analysis' }).waitFor();
      expect(logged.filter((text) => text.includes('HydrateFallback'))).toEqual([]);
    } finally {
      adminPage.off('console', listen);
    }
    // At a laptop's 1280 px the cards fit the page, and every figure shows whole inside its card (a name is cut instead).
    await atViewport(adminPage, { width: 1280, height: 720 }, async () => {
      // A string, as the other page scripts here: the tests are type-checked without the DOM's types.
      const clipped = await adminPage.evaluate(`(() => {
        const out = [];
        for (const value of document.querySelectorAll('.analysis-card-value')) {
          const card = value.closest('.analysis-card').getBoundingClientRect();
          if (value.getBoundingClientRect().right > card.right + 0.5 || value.scrollWidth > value.clientWidth) out.push(value.textContent);
        }
        return { pageWider: document.documentElement.scrollWidth > window.innerWidth, clipped: out.slice(0, 5) };
      })()`);
      expect(clipped).toEqual({ pageWider: false, clipped: [] });
    });
  });
});

describe('top risk', { timeout: 60_000 }, () => {
  /** "Compaction Score (0)" as the API writes it: the dimension's name and its 0–100 score. */
  const parse = (topRisk: string) => {
    const m = /^(.+) \((\d+)\)$/.exec(topRisk);
    expect(m, topRisk).not.toBeNull();
    return { name: m![1]!, score: m![2]! };
  };
  /** A top risk as shown: the name, then a muted "score N", never the bare "(N)" read as the metric's value. */
  async function expectShown(where: ReturnType<Page['locator']>, topRisk: string) {
    const { name, score } = parse(topRisk);
    expect(await where.locator('.top-risk-name').textContent()).toBe(name);
    const shownScore = where.locator('.top-risk-score');
    expect(await shownScore.textContent()).toBe(`score ${score}`);
    expect(await shownScore.getAttribute('class')).toContain('muted');
    expect(await where.textContent()).not.toContain(`(${score})`);
  }

  it('the fleet, health, critical and cluster pages name the number a score ("score 0"); the fleet search still finds the raw text', async () => {
    const fleet = (await api(service.url, admin, 'GET', '/api/fleet/scores')).body.scores[0];
    await open(adminPage, '/', 'Fleet overview', 'main table tbody tr[data-index]');
    const fleetCell = adminPage.locator('main table tbody tr[data-index]').first().locator('.top-risk');
    await expectShown(fleetCell, fleet.top_risk);
    expect(await fleetCell.getAttribute('title')).toContain(fleet.top_risk);
    // In the narrow column the name takes the ellipsis: the score is inside the cell, not cut.
    const cell = await fleetCell.locator('xpath=ancestor::td[1]').boundingBox();
    const score = await fleetCell.locator('.top-risk-score').boundingBox();
    expect(score!.width).toBeGreaterThan(0);
    expect(score!.x + score!.width).toBeLessThanOrEqual(cell!.x + cell!.width);
    await adminPage.getByLabel('Search').fill(fleet.top_risk);
    await adminPage.waitForURL((u) => u.searchParams.get('q') === fleet.top_risk);
    await expect.poll(() => adminPage.locator('.fleet-count').textContent()).toMatch(/ of \d+ clusters match\./);
    expect(await adminPage.locator('main table tbody tr[data-index]').filter({ hasText: fleet.cluster_name }).count()).toBeGreaterThan(0);

    const health = (await api(service.url, admin, 'GET', '/api/health/scores')).body.scores[0];
    await open(adminPage, '/health', 'Health', 'table.health-table > tbody > tr');
    await expectShown(adminPage.locator('table.health-table > tbody > tr').first().locator('td.health-wrap'), health.top_risk);

    const critical = (await api(service.url, admin, 'GET', '/api/fleet/critical')).body.clusters;
    if (critical.length > 0) {
      await adminPage.goto('/critical');
      const table = adminPage.getByRole('region', { name: 'Warning and Critical clusters by unified score, worst first' });
      const row = table.locator('tbody tr[data-index]').filter({ has: adminPage.getByRole('link', { name: critical[0].cluster_name, exact: true }) });
      await row.first().waitFor();
      await expectShown(row.first().locator('.top-risk'), critical[0].top_risk);
    }

    const record = (await api(service.url, admin, 'GET', '/api/health/scores')).body.scores.find(
      (s: { cluster_id: string }) => s.cluster_id === fleet.cluster_id,
    );
    await adminPage.goto(`/clusters/${encodeURIComponent(fleet.cluster_id)}`);
    await adminPage.getByRole('heading', { level: 1, name: fleet.cluster_name }).waitFor();
    const shown = adminPage.locator('.cluster-subscores li', { hasText: 'Top risk' });
    await expect.poll(() => shown.count()).toBe(2);
    await expectShown(shown.first(), fleet.top_risk);
    await expectShown(shown.nth(1), record.top_risk);
  });
});

describe('investigations', { timeout: 60_000 }, () => {
  it('write the severity as every other page does ("Critical", not "critical"), in the list and on the investigation', async () => {
    const id = `console-views-severity-${randomUUID().slice(0, 8)}`;
    const task = {
      task_id: `${id}-task`,
      cluster_id: randomUUID(),
      cluster_name: id,
      customer_name: 'Severity Customer',
      customer_tier: 'A',
      trigger_reason: 'console-views severity test',
      priority: 1,
      created_at: new Date().toISOString(),
    };
    expect(await createTask(task, new Date(Date.now() + 60_000).toISOString())).toBe(true);
    const claimed = await claimTask(task.task_id, 'console-views-test', 60_000);
    await completeTask(claimed!, {
      investigation_id: id,
      task_id: task.task_id,
      cluster_id: task.cluster_id,
      cluster_name: task.cluster_name,
      customer_name: task.customer_name,
      severity: 'critical',
      confidence: 0.9,
      root_cause: 'Compaction is behind',
      recommended_actions: '- Add compaction threads',
      model: 'rules',
      input_tokens: 0,
      output_tokens: 0,
      total_tokens: 0,
      cost_usd: 0,
      duration_seconds: 1,
      created_at: new Date().toISOString(),
      full_report: '## Findings\n\nCompaction is behind.',
    });
    expect((await api(service.url, admin, 'GET', `/api/investigations/${id}`)).body.severity).toBe('critical');

    await adminPage.goto(`/investigations?customer=${encodeURIComponent(task.customer_name)}`);
    const row = adminPage.getByRole('region', { name: 'Investigation reports' }).locator('tbody tr', { hasText: id });
    await row.waitFor();
    expect(await row.locator('.badge').textContent()).toBe('Critical');

    await row.getByRole('link', { name: id }).click();
    await adminPage.getByRole('heading', { level: 1, name: `Investigation of ${id}` }).waitFor();
    expect(await adminPage.locator('.inv-badges .badge').textContent()).toBe('Critical');
  });
});

describe('alert issues', { timeout: 60_000 }, () => {
  const listed = (page: Page) => page.waitForResponse((r) => new URL(r.url()).pathname === '/api/issues' && r.request().method() === 'GET');
  const count = (page: Page) => page.locator('.issues-count').textContent();

  it('lists the issues the API answers, keeps the severity filter in the URL across a reload, and passes axe', async () => {
    const first = listed(adminPage);
    await adminPage.goto('/issues');
    await adminPage.getByRole('heading', { level: 1, name: 'Alert issues' }).waitFor();
    const all = await (await first).json();
    expect(all.total).toBeGreaterThan(0);
    await adminPage.getByRole('link', { name: all.issues[0].issue_name }).first().waitFor();
    await expect.poll(() => count(adminPage)).toContain(all.total === 1 ? '1 issue' : `${all.total} issues`);
    await expectAccessible(adminPage, '/issues');

    const severity = all.issues[0].severity as string;
    const filtered = listed(adminPage);
    await adminPage.getByRole('checkbox', { name: severity }).click(); // the box follows the URL a moment later
    await adminPage.waitForURL((u) => u.searchParams.get('severities') === severity);
    const narrowed = await (await filtered).json();
    expect(narrowed.total).toBeGreaterThan(0); // the severity is a listed issue's: `every` on an empty list proves nothing
    expect(narrowed.issues.every((i: { severity: string }) => i.severity === severity)).toBe(true);
    const text = narrowed.total === 1 ? '1 issue' : `${narrowed.total} issues`;
    await expect.poll(() => count(adminPage)).toContain(text);

    const again = listed(adminPage);
    await adminPage.reload();
    expect((await (await again).json()).total).toBe(narrowed.total);
    expect(await adminPage.getByRole('checkbox', { name: severity }).isChecked()).toBe(true);
    await expect.poll(() => count(adminPage)).toContain(text);
    await adminPage.getByRole('link', { name: narrowed.issues[0].issue_name }).first().waitFor();

    // An edited or old link with values the list does not know: read as the defaults the controls show, not a 422
    // that "Try again" could never mend; a known one in another case is taken in the controls' case.
    const edited = listed(adminPage);
    await adminPage.goto(`/issues?severities=Bogus,${severity.toLowerCase()}&status=nope`);
    const asked = new URL((await edited).url()).searchParams;
    expect([asked.get('severities'), asked.get('status')]).toEqual([severity, null]);
    expect(await adminPage.getByRole('checkbox', { name: severity }).isChecked()).toBe(true);
    await expect.poll(() => count(adminPage)).toContain(text);
    expect(await adminPage.getByRole('alert').count()).toBe(0);
    // A refusal of the request itself (a customer name past 200 characters) offers no "Try again": it would be refused again.
    await adminPage.goto(`/issues?customer=${'x'.repeat(201)}`);
    const refused = adminPage.getByRole('alert').filter({ hasText: '(422)' });
    await refused.waitFor();
    expect(await refused.getByRole('button', { name: 'Try again' }).count()).toBe(0);
  });

  it('shows no pager claiming a page past the last: the list says it is past the last page and offers the last', async () => {
    const answered = listed(adminPage);
    await adminPage.goto('/issues?page=99');
    const last = (await (await answered).json()).total_pages as number;
    expect(last).toBeGreaterThan(0);
    expect(last).toBeLessThan(99);
    await adminPage.getByText(`Page 99 is past the last page (${last}).`).waitFor();
    expect(await adminPage.getByRole('navigation', { name: 'Pages' }).count()).toBe(0);
    // The last page has its pager, saying where it is.
    await adminPage.getByRole('button', { name: `Go to page ${last}` }).click();
    await expect
      .poll(() => adminPage.getByRole('navigation', { name: 'Pages' }).locator('[aria-current="page"]').textContent())
      .toBe(`Page ${last} of ${last}`);
  });

  it('links a ticket made by hand when no provider is set up: the 503 is a note, not a failure, the form links it, the page shows it', async () => {
    delete process.env.TICKET_PROVIDER;
    const { body } = await api(service.url, admin, 'GET', '/api/issues?days=30&page_size=100');
    const issue = (body.issues as { issue_id: string; ticket_key: string }[]).find((i) => !i.ticket_key)!;
    await adminPage.goto(`/issues/${encodeURIComponent(issue.issue_id)}`);
    const panel = adminPage.getByRole('region', { name: 'Ticket' });
    await panel.getByText('No ticket yet.').waitFor();
    await panel.getByRole('button', { name: 'Create ticket' }).click();
    // A note with the focus, where the button was, and the form to link one made by hand open: no red failure, no button to press again.
    const note = panel.getByRole('status').filter({ hasText: 'Ticket creation is not set up on this service' });
    await note.waitFor();
    await note.getByText('No ticket provider is configured: set TICKET_PROVIDER', { exact: false }).waitFor(); // the service's own reason
    await expect.poll(() => note.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    expect(await panel.getByRole('alert').count()).toBe(0);
    expect(await panel.getByRole('button', { name: 'Create ticket' }).count()).toBe(0);
    expect(await panel.locator('details.issue-ticket-link').getAttribute('open')).not.toBeNull();
    await panel.getByLabel('Ticket key').fill('OPS-4242');
    await panel.getByLabel('Address (optional)').fill('https://tracker.example.com/browse/OPS-4242');
    const linked = adminPage.waitForResponse((r) => r.request().method() === 'PATCH' && new URL(r.url()).pathname === `/api/issues/${issue.issue_id}`);
    await panel.getByRole('button', { name: 'Link ticket' }).click();
    expect((await linked).request().postDataJSON()).toEqual({ ticket_key: 'OPS-4242', ticket_url: 'https://tracker.example.com/browse/OPS-4242' });
    await panel.getByRole('link', { name: 'OPS-4242' }).first().waitFor();
    await panel.getByText('Linked', { exact: false }).waitFor();
    expect(await panel.getByRole('button', { name: 'Create ticket' }).count()).toBe(0);
    // The failed create is over: its 503 no longer shows under "Linked …".
    expect(await panel.getByRole('alert').count()).toBe(0);
    const read = await api(service.url, admin, 'GET', `/api/issues/${encodeURIComponent(issue.issue_id)}`);
    expect(read.body.issue).toMatchObject({ ticket_key: 'OPS-4242', ticket_url: 'https://tracker.example.com/browse/OPS-4242' });
    await expectAccessible(adminPage, '/issues/{id} with a linked ticket');

    // A mistyped key is corrected, and a ticket linked to the wrong issue removed, from the same panel.
    await panel.getByText('Change or remove the ticket').click();
    expect(await panel.getByLabel('Ticket key').inputValue()).toBe('OPS-4242');
    expect(await panel.getByRole('button', { name: 'Save ticket' }).isDisabled()).toBe(true); // nothing changed yet
    await panel.getByLabel('Ticket key').fill('OPS-4243');
    await panel.getByLabel('Address (optional)').fill('https://tracker.example.com/browse/OPS-4243');
    await panel.getByRole('button', { name: 'Save ticket' }).click();
    await panel.getByRole('status').getByRole('link', { name: 'OPS-4243' }).waitFor();
    const removed = adminPage.waitForResponse((r) => r.request().method() === 'PATCH' && new URL(r.url()).pathname === `/api/issues/${issue.issue_id}`);
    await panel.getByText('Change or remove the ticket').click();
    await panel.getByRole('button', { name: 'Remove the ticket from this issue' }).click();
    expect((await removed).request().postDataJSON()).toEqual({ ticket_key: '', ticket_url: '' });
    await panel.getByRole('status').filter({ hasText: 'Ticket removed from this issue.' }).waitFor();
    await panel.getByText('No ticket yet.').waitFor();
    expect((await api(service.url, admin, 'GET', `/api/issues/${encodeURIComponent(issue.issue_id)}`)).body.issue).toMatchObject({
      ticket_key: '',
      ticket_url: '',
    });
  });

  it('warns on the issue when a create got no definite answer from the tracker; another ticket is then asked for on purpose', async () => {
    delete process.env.TICKET_PROVIDER;
    const { body } = await api(service.url, admin, 'GET', '/api/issues?days=30&page_size=100');
    const issue = (body.issues as { issue_id: string; ticket_key: string }[]).find((i) => !i.ticket_key)!;
    // As a create whose tracker timed out leaves the issue (shared/issues/triage.ts), whoever's page it was.
    const token = randomUUID();
    await claimTicket(issue.issue_id, token, new Date(0));
    await markTicketUnconfirmed(issue.issue_id, token);
    await adminPage.goto(`/issues/${encodeURIComponent(issue.issue_id)}`);
    const panel = adminPage.getByRole('region', { name: 'Ticket' });
    await panel.getByText('got no definite answer from the tracker: a ticket may exist there', { exact: false }).waitFor();
    expect(await panel.getByRole('button', { name: 'Create ticket', exact: true }).count()).toBe(0);
    expect(await panel.locator('details.issue-ticket-link').getAttribute('open')).not.toBeNull(); // linking it comes first
    await expectAccessible(adminPage, '/issues/{id} whose ticket may exist');
    const posted = adminPage.waitForRequest((r) => r.method() === 'POST' && new URL(r.url()).pathname.endsWith('/create-ticket'));
    await panel.getByRole('button', { name: 'Create another ticket anyway' }).click();
    expect(new URL((await posted).url()).searchParams.get('again')).toBe('true');
    await panel.getByText('Ticket creation is not set up on this service', { exact: false }).waitFor(); // past the warning: no provider here
    // The warning stays beside that answer, and nothing names a label the answer did not give.
    await panel.getByText('got no definite answer from the tracker', { exact: false }).waitFor();
    expect(await panel.getByText('Look in the tracker for a ticket labelled', { exact: false }).count()).toBe(0);
  });

  it('lets an admin triage an issue through the form, read back through the API; a viewer gets no triage controls', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/issues');
    const id: string = body.issues[0].issue_id;
    const notes = `Checked in the browser at ${new Date().toISOString()}`;
    await adminPage.goto(`/issues/${encodeURIComponent(id)}`);
    await adminPage.getByRole('button', { name: 'Save triage' }).waitFor();
    await expectAccessible(adminPage, '/issues/{id}');
    await adminPage.getByLabel('Triage status').fill('investigating');
    await adminPage.getByLabel('Notes').fill(notes);
    const saved = adminPage.waitForResponse((r) => r.request().method() === 'PATCH' && new URL(r.url()).pathname === `/api/issues/${id}`);
    await adminPage.getByRole('button', { name: 'Save triage' }).click();
    expect((await saved).status()).toBe(200);
    const read = await api(service.url, admin, 'GET', `/api/issues/${encodeURIComponent(id)}`);
    expect(read.body.issue).toMatchObject({ triage_status: 'investigating', notes });

    await viewerPage.goto(`/issues/${encodeURIComponent(id)}`);
    await viewerPage.getByRole('heading', { level: 1, name: body.issues[0].issue_name }).waitFor();
    expect(await viewerPage.getByRole('button', { name: 'Save triage' }).count()).toBe(0);
    expect(await viewerPage.getByLabel('Triage status').count()).toBe(0);
    expect(await viewerPage.getByRole('button', { name: /refresh/i }).count()).toBe(0);
    await expectAccessible(viewerPage, '/issues/{id} as a viewer');
  });

  /**
   * The first listed issue open in a page of its own with a fake clock, an unsaved draft typed in its notes; `then`
   * runs on it, and the page closes after.
   */
  async function withUnsavedDraft(then: (page: Page, issue: { id: string; name: string }, draft: string) => Promise<void>) {
    const { body } = await api(service.url, admin, 'GET', '/api/issues');
    const issue = { id: body.issues[0].issue_id as string, name: body.issues[0].issue_name as string };
    const page = await browser.page();
    try {
      await page.clock.install();
      await signIn(page, 'admin', PASSWORD, `/issues/${encodeURIComponent(issue.id)}`);
      await page.getByRole('button', { name: 'Save triage' }).waitFor();
      const draft = `Unsaved draft ${randomUUID()}`;
      await page.getByLabel('Notes').fill(draft);
      await then(page, issue, draft);
    } finally {
      await page.close();
    }
  }

  it("keeps an admin's unsaved edits when the issue is read again after someone else's triage, and says what changed meanwhile", async () => {
    await withUnsavedDraft(async (page, { id }, draft) => {
      // Another admin triages it meanwhile (through the API).
      const other = await api(service.url, admin, 'PATCH', `/api/issues/${encodeURIComponent(id)}`, { triage_status: 'escalated', notes: 'their notes' });
      expect(other.status).toBe(200);
      // The tab reads the issue again: stale after 30 s, when it is shown again.
      const reread = page.waitForResponse((r) => r.request().method() === 'GET' && new URL(r.url()).pathname === `/api/issues/${id}`);
      await page.clock.fastForward(31_000);
      await page.evaluate("window.dispatchEvent(new Event('visibilitychange'))");
      await reread;
      await page.getByRole('status').filter({ hasText: 'while you edited' }).waitFor();
      expect(await page.getByLabel('Notes').inputValue()).toBe(draft);
      // What was not edited here follows what is stored.
      expect(await page.getByLabel('Triage status').inputValue()).toBe('escalated');
      await expectAccessible(page, '/issues/{id} with edits kept over a newer version');
    });
  });

  it('never overwrites a triage saved after the page read the issue: the save is refused (409), the page reads it again, and a second save stores the edits knowingly', async () => {
    await withUnsavedDraft(async (page, { id }, draft) => {
      // Another admin saves notes while this tab still shows the issue as it read it.
      expect((await api(service.url, admin, 'PATCH', `/api/issues/${encodeURIComponent(id)}`, { notes: `their notes ${randomUUID()}` })).status).toBe(200);
      const refused = page.waitForResponse((r) => r.request().method() === 'PATCH' && new URL(r.url()).pathname === `/api/issues/${id}`);
      await page.getByRole('button', { name: 'Save triage' }).click();
      const first = await refused;
      expect(first.status()).toBe(409);
      expect(first.request().headers()['if-match']).toMatch(/^"t\d+"$/);
      await page.getByRole('alert').filter({ hasText: 'after you read it: nothing was changed' }).waitFor();
      await page.getByRole('status').filter({ hasText: 'while you edited' }).waitFor();
      expect(await page.getByLabel('Notes').inputValue()).toBe(draft);
      const saved = page.waitForResponse((r) => r.request().method() === 'PATCH' && new URL(r.url()).pathname === `/api/issues/${id}`);
      await page.getByRole('button', { name: 'Save triage' }).click();
      expect((await saved).status()).toBe(200);
      expect((await api(service.url, admin, 'GET', `/api/issues/${encodeURIComponent(id)}`)).body.issue.notes).toBe(draft);
    });
  });

  it('saves once on a double click of Save triage: no second PATCH, no conflict of the save with itself', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/issues');
    const id = body.issues[1].issue_id as string;
    const page = await browser.page();
    try {
      await signIn(page, 'admin', PASSWORD, `/issues/${encodeURIComponent(id)}`);
      const notes = `Double-clicked ${randomUUID()}`;
      await page.getByLabel('Notes').fill(notes);
      const patches: string[] = [];
      page.on('request', (r) => {
        if (r.method() === 'PATCH' && new URL(r.url()).pathname === `/api/issues/${id}`) patches.push(r.url());
      });
      await page.getByRole('button', { name: 'Save triage' }).dblclick();
      // Shown once the save answered and the issue was read again: a second click's request was sent before.
      await page.getByRole('status').filter({ hasText: 'Stored now' }).waitFor();
      expect(patches).toHaveLength(1);
      expect(await page.getByRole('alert').count()).toBe(0);
      expect(await page.getByLabel('Notes').inputValue()).toBe(notes);
    } finally {
      await page.close();
    }
  });

  it('says at once that a triage saved while the browser is offline did not get through, keeps the edit, and saves it once back online', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/issues');
    const id = body.issues[2].issue_id as string;
    const page = await browser.page();
    try {
      await signIn(page, 'admin', PASSWORD, `/issues/${encodeURIComponent(id)}`);
      const notes = `Written offline ${randomUUID()}`;
      await page.getByLabel('Notes').fill(notes);
      await page.context().setOffline(true);
      await page.getByRole('button', { name: 'Save triage' }).click();
      await page.getByRole('alert').filter({ hasText: 'The service did not answer. Check your connection and try again.' }).waitFor();
      expect(await page.getByLabel('Notes').inputValue()).toBe(notes);
      expect((await api(service.url, admin, 'GET', `/api/issues/${encodeURIComponent(id)}`)).body.issue.notes).not.toBe(notes);

      await page.context().setOffline(false);
      await page.getByRole('button', { name: 'Save triage' }).click();
      await page.getByRole('status').filter({ hasText: 'Stored now' }).waitFor();
      expect((await api(service.url, admin, 'GET', `/api/issues/${encodeURIComponent(id)}`)).body.issue.notes).toBe(notes);
    } finally {
      await page.close();
    }
  });

  it('keeps the issue and the unsaved edits when reading it again fails, with the problem shown above', async () => {
    await withUnsavedDraft(async (page, { id, name }, draft) => {
      // From now on the service fails every read of the issue (the page retries a 5xx twice first).
      await page.route(
        (u) => u.pathname === `/api/issues/${id}`,
        (route) =>
          route.request().method() === 'GET'
            ? route.fulfill({
                status: 503,
                contentType: 'application/problem+json',
                body: JSON.stringify({ title: 'Service Unavailable', detail: 'Down for a test.' }),
              })
            : route.fallback(),
      );
      // Stale after 30 s, the issue is read again when the tab is shown again.
      await page.clock.fastForward(31_000);
      await page.evaluate("window.dispatchEvent(new Event('visibilitychange'))");
      await page.getByRole('alert').filter({ hasText: 'Down for a test.' }).waitFor();
      expect(await page.getByLabel('Notes').count()).toBe(1); // the form is still there
      expect(await page.getByLabel('Notes').inputValue()).toBe(draft);
      expect(await page.getByRole('button', { name: 'Save triage' }).isEnabled()).toBe(true);
      await page.getByRole('heading', { level: 1, name }).waitFor();
    });
  });

  it('starts the triage form afresh when another issue is opened from the page: no unsaved notes carried over', async () => {
    // Two issues of one new cluster, each in the other's cluster history; the second has stored notes.
    const cluster = newCluster(`pair-${randomUUID().slice(0, 8)}`, 'Pair Co');
    expect((await api(service.url, service.ingestToken, 'POST', '/api/ingest/clusters', { clusters: [cluster] })).body).toMatchObject({ accepted: 1 });
    const [nameA, nameB] = [`First-${randomUUID().slice(0, 8)}`, `Second-${randomUUID().slice(0, 8)}`];
    await fire([cluster.cluster_id, nameA], [cluster.cluster_id, nameB]);
    await issueIdOf(nameA); // an issue of its own
    const b = await issueIdOf(nameB);
    expect((await api(service.url, admin, 'PATCH', `/api/issues/${b}`, { notes: 'B stored notes' })).status).toBe(200);

    // B first (so its answer is cached and shows at once when opened again), then A in the app.
    await adminPage.goto(`/issues/${encodeURIComponent(b)}`);
    await adminPage.getByRole('heading', { level: 1, name: nameB }).waitFor();
    const history = adminPage.locator('section.issue-history');
    await history.getByRole('link', { name: nameA }).click();
    await adminPage.getByRole('heading', { level: 1, name: nameA }).waitFor();
    await adminPage.getByLabel('Notes').fill('unsaved notes on A');
    expect(await adminPage.getByRole('button', { name: 'Save triage' }).isEnabled()).toBe(true);

    await history.getByRole('link', { name: nameB }).click();
    await adminPage.getByRole('heading', { level: 1, name: nameB }).waitFor();
    expect(await adminPage.getByLabel('Notes').inputValue()).toBe('B stored notes');
    expect(await adminPage.getByRole('button', { name: 'Save triage' }).isDisabled()).toBe(true);
  });

  it('an alert name of 1,024 characters with no space wraps on the issue page: nothing runs over the sidebar or scrolls sideways', async () => {
    const cluster = newCluster(`long-${randomUUID().slice(0, 8)}`, 'Long Co');
    expect((await api(service.url, service.ingestToken, 'POST', '/api/ingest/clusters', { clusters: [cluster] })).body).toMatchObject({ accepted: 1 });
    const tag = `Long-${randomUUID().slice(0, 8)}-`;
    const name = tag + 'x'.repeat(1024 - tag.length);
    // Through the webhook as fire() sends it, with a fingerprint of its own (fire() makes one from the name).
    const alert = {
      status: 'firing',
      labels: { alertname: name, cluster_id: cluster.cluster_id, severity: 'warning' },
      annotations: { description: `${name} detail` },
      startsAt: new Date(Date.now() - 600_000).toISOString(),
      endsAt: '0001-01-01T00:00:00Z',
      fingerprint: `${cluster.cluster_id}-long`,
    };
    expect((await api(service.url, service.ingestToken, 'POST', '/api/ingest/alerts', { version: '4', alerts: [alert] })).body).toMatchObject({ accepted: 1 });
    const { body } = await api(service.url, admin, 'GET', `/api/issues?search=${encodeURIComponent(tag)}`);
    expect(body.issues).toHaveLength(1);
    await adminPage.goto(`/issues/${encodeURIComponent(body.issues[0].issue_id)}`);
    await adminPage.locator('.issue-timeline li').first().waitFor();
    await adminPage.locator('.issue-evidence li, .issue-evidence tr').first().waitFor();
    expect(await adminPage.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    const main = await adminPage.locator('.issue-main').boundingBox();
    const timeline = await adminPage.locator('.issue-timeline').boundingBox();
    expect(timeline!.x + timeline!.width).toBeLessThanOrEqual(main!.x + main!.width + 1);
    // nor do the evidence's tables run thousands of pixels past their scroll box, the columns after the name out of view
    const overflowing = await adminPage.evaluate(
      "[...document.querySelectorAll('.issue-evidence table')].filter((t) => t.scrollWidth > t.parentElement.clientWidth + 1).map((t) => t.querySelector('caption')?.textContent)",
    );
    expect(overflowing).toEqual([]);
  });
});

describe('an issue whose answers leave alerts out, and one regrouping superseded', { timeout: 90_000 }, () => {
  /** Alertmanager notices on `clusterId`: one `name` alert per [started, ended] minutes ago. */
  const ingest = async (clusterId: string, name: string, spans: [number, number][]) => {
    const alerts = spans.map(([started, ended], i) => ({
      status: 'resolved',
      labels: { alertname: name, cluster_id: clusterId, severity: 'warning' },
      annotations: { description: `${name} ${i}` },
      startsAt: new Date(Date.now() - started * 60_000).toISOString(),
      endsAt: new Date(Date.now() - ended * 60_000).toISOString(),
      fingerprint: `${name}-${started}`,
    }));
    const sent = await api(service.url, service.ingestToken, 'POST', '/api/ingest/alerts', { version: '4', alerts });
    expect(sent.body).toMatchObject({ accepted: spans.length, rejected: [] });
  };
  const issuesNamed = async (name: string) =>
    (await api(service.url, admin, 'GET', `/api/issues?search=${encodeURIComponent(name)}&page_size=100`)).body.issues as {
      issue_id: string;
      first_seen: string;
    }[];
  const demoCluster = async () => (await api(service.url, admin, 'GET', '/api/fleet/scores')).body.scores[0].cluster_id as string;

  it('says the timeline and the evidence show the newest of more alerts than the answers carry', async () => {
    // 212 alerts a minute apart: one issue, and more than the 200 an answer lists (ALERTS_SHOWN).
    const name = `Burst-${randomUUID().slice(0, 8)}`;
    await ingest(
      await demoCluster(),
      name,
      Array.from({ length: 212 }, (_, i): [number, number] => [300 - i, 300 - i - 0.5]),
    );
    const [issue] = await issuesNamed(name);
    const id = encodeURIComponent(issue!.issue_id);
    const detail = (await api(service.url, admin, 'GET', `/api/issues/${id}`)).body;
    expect(detail).toMatchObject({ alerts_total: 212, alerts_truncated: true });
    expect(detail.alerts).toHaveLength(200);
    const evidence = (await api(service.url, admin, 'GET', `/api/issues/${id}/evidence`)).body;
    expect(evidence.alerts_truncated).toBe(true);

    await adminPage.goto(`/issues/${id}`);
    const timeline = adminPage.locator('section.issue-timeline');
    await timeline.getByText('Showing the newest 200 of 212 alerts.').waitFor();
    await adminPage.locator('section.issue-evidence').getByText(`Showing the newest ${evidence.alerts.length} of ${evidence.alerts_total} alerts.`).waitFor();
    expect(await timeline.locator('ol > li').count()).toBe(200);
    // Rows past the tenth are the same markup: checked, the 400 took axe 20 s.
    await expectAccessible(adminPage, '/issues/{id} (alerts left out)', {
      exclude: ['section.issue-timeline ol > li:nth-child(n+11)', 'section.issue-evidence tbody > tr:nth-child(n+11)'],
    });
  });

  it('a triage saved on an issue regrouping superseded meanwhile names the live issue and links to it', async () => {
    // Two issues of one alert, more than the join window apart, both triaged (so the one folded in is kept, superseded).
    const name = `Lag-${randomUUID().slice(0, 8)}`;
    const cluster = await demoCluster();
    await ingest(cluster, name, [
      [600, 590],
      [60, 50],
    ]);
    const [older, newer] = (await issuesNamed(name)).sort((a, b) => (a.first_seen < b.first_seen ? -1 : 1));
    for (const i of [older!, newer!]) expect((await api(service.url, admin, 'PATCH', `/api/issues/${i.issue_id}`, { notes: 'watching' })).status).toBe(200);

    // The page is open, the form filled; meanwhile an alert between the two merges them into the older one.
    await adminPage.goto(`/issues/${encodeURIComponent(newer!.issue_id)}`);
    await adminPage.getByRole('button', { name: 'Save triage' }).waitFor();
    expect(
      await adminPage
        .locator('section.issue-timeline')
        .getByText(/Showing the newest/)
        .count(),
    ).toBe(0);
    await adminPage.getByLabel('Triage status').fill('investigating');
    await ingest(cluster, name, [[400, 250]]);
    expect((await issuesNamed(name)).map((i) => i.issue_id)).toEqual([older!.issue_id]);

    const saved = adminPage.waitForResponse((r) => r.request().method() === 'PATCH' && new URL(r.url()).pathname === `/api/issues/${newer!.issue_id}`);
    await adminPage.getByRole('button', { name: 'Save triage' }).click();
    const refused = await saved;
    expect(refused.status()).toBe(409);
    expect(await refused.json()).toMatchObject({ superseded_by: older!.issue_id });
    const form = adminPage.locator('form.issue-triage-form');
    await form.getByRole('alert').getByText(`regrouped into ${older!.issue_id}`).waitFor();
    const link = form.getByRole('link', { name: `Continue on the live issue ${older!.issue_id}` });
    expect(await link.getAttribute('href')).toBe(`/issues/${encodeURIComponent(older!.issue_id)}`);
    await expectAccessible(adminPage, '/issues/{id} (superseded)');
    expect((await api(service.url, admin, 'GET', `/api/issues/${newer!.issue_id}`)).body.issue.triage_status).toBe('');

    await link.click();
    await adminPage.waitForURL((u) => u.pathname === `/issues/${encodeURIComponent(older!.issue_id)}`);
    await adminPage.getByRole('button', { name: 'Save triage' }).waitFor();

    // Opened afresh, the folded-in issue says why it reads Resolved and where its alerts went; it takes no triage.
    const folded = (await api(service.url, admin, 'GET', `/api/issues/${newer!.issue_id}`)).body;
    expect(folded.regrouped).toMatchObject({ into: older!.issue_id });
    expect((await api(service.url, admin, 'GET', `/api/issues/${older!.issue_id}`)).body.regrouped).toBeNull();
    await adminPage.goto(`/issues/${encodeURIComponent(newer!.issue_id)}`);
    const note = adminPage.locator('.issue-regrouped');
    await note.getByRole('link', { name: older!.issue_id }).waitFor();
    expect(await note.textContent()).toMatch(/^Regrouped .*\. Its alerts are followed, triaged and ticketed on the live issue /);
    expect(await adminPage.getByRole('button', { name: 'Save triage' }).count()).toBe(0);
    await expectAccessible(adminPage, '/issues/{id} (regrouped)');
  });
});

describe('staleness', { timeout: 60_000 }, () => {
  it('marks a cluster whose metrics stopped arriving "stale", in words, in the fleet table and on its page; the fed demo fleet is not', async () => {
    const cluster = newCluster(`silent-${randomUUID().slice(0, 8)}`, 'Quiet Co');
    const { cluster_id: id, cluster_name: name } = cluster;
    metricless.delete(id); // the one this test expects stale
    expect((await api(service.url, service.ingestToken, 'POST', '/api/ingest/clusters', { clusters: [cluster] })).body).toEqual({ accepted: 1, rejected: [] });
    expect((await api(service.url, admin, 'POST', '/api/fleet/refresh')).status).toBe(200);
    const { body } = await api(service.url, admin, 'GET', '/api/fleet/scores');
    // The demo fleet is fed: only this cluster and those other tests added without metrics are stale.
    const stale = body.scores.filter((s: { metrics_stale: boolean }) => s.metrics_stale).map((s: { cluster_id: string }) => s.cluster_id);
    expect(stale.filter((s: string) => !metricless.has(s))).toEqual([id]);

    const ROWS = 'main table tbody tr[data-index]';
    await open(adminPage, `/?q=${encodeURIComponent(name)}`, 'Fleet overview', ROWS);
    const badge = adminPage.locator(`${ROWS} .badge.metrics-stale`);
    expect(await badge.count()).toBe(1);
    expect(await badge.textContent()).toBe('stale: no metrics in the scoring lookback');
    expect(await badge.getAttribute('title')).toBe('Metrics stale: no metrics in the scoring lookback');

    await adminPage.goto(`/clusters/${encodeURIComponent(id)}`);
    const note = adminPage.locator('header .cluster-stale');
    await note.waitFor();
    expect(await note.textContent()).toContain('stale Its metrics stopped arriving: no metrics in the scoring lookback.');
    await expectAccessible(adminPage, '/clusters/{id} (stale)');
  });
});

describe('upgrades', { timeout: 60_000 }, () => {
  it('keeps the service’s version order: a release is newer than its release candidate, which is behind it', async () => {
    const clusterOn = (version: string) => ({ ...newCluster(`v${version}-${randomUUID().slice(0, 6)}`, 'Upgrade Co'), engine_version: version });
    const release = clusterOn('3.10.0');
    const candidate = clusterOn('3.10.0-rc1');
    const ingested = await api(service.url, service.ingestToken, 'POST', '/api/ingest/clusters', { clusters: [candidate, release] });
    expect(ingested.body).toEqual({ accepted: 2, rejected: [] });
    expect((await api(service.url, admin, 'POST', '/api/fleet/refresh')).status).toBe(200);
    const { body } = await api(service.url, admin, 'GET', '/api/analysis/upgrades');
    expect(body.available_versions.slice(0, 2)).toEqual(['3.10.0', '3.10.0-rc1']);

    await adminPage.goto('/analysis');
    await adminPage.getByRole('heading', { level: 1, name: 'Analysis' }).waitFor();
    const latest = adminPage.locator('.analysis-versions li.latest');
    await latest.waitFor();
    expect(await latest.textContent()).toBe('3.10.0 (latest)');
    const upgradeOf = async (name: string) => {
      await adminPage.getByRole('search', { name: 'Filter upgrades' }).getByLabel('Search').fill(name);
      const row = adminPage.getByRole('row').filter({ has: adminPage.getByRole('link', { name }) });
      await row.waitFor();
      return row.textContent();
    };
    expect(await upgradeOf(candidate.cluster_name)).toContain('to 3.10.0 (1 newer version)');
    expect(await upgradeOf(release.cluster_name)).toContain('on the latest');
  });
});

describe('LLM cost with nothing spent', { timeout: 60_000 }, () => {
  it('states no average cost of a run: "$0.00 each on average" of no runs read as runs that cost nothing', async () => {
    expect((await api(service.url, admin, 'GET', '/api/llm-usage/summary?days=30')).body.totals.runs).toBe(0);
    await adminPage.goto('/llm-cost');
    await adminPage.getByRole('heading', { level: 1, name: 'LLM cost' }).waitFor();
    const runs = adminPage.getByRole('list', { name: 'Totals' }).getByRole('listitem').filter({ hasText: 'Runs' });
    await runs.waitFor();
    expect((await runs.textContent())?.replace(/\s+/g, ' ').trim()).toBe('0Runs');
    await adminPage.getByText('No model calls in the last 30 days.', { exact: false }).first().waitFor();
  });
});

describe('a cluster of a long name, on a phone', { timeout: 90_000 }, () => {
  it('its page, its issue and the health filters wrap or narrow: the page never scrolls sideways at 390 px', async () => {
    // 128 characters with no space (the longest name ingest takes), and a 63-character region.
    const name = `longname-${'x'.repeat(119)}`;
    const cluster = { ...newCluster(name, 'Long Co'), region: 'Asia Pacific (ap-southeast-1) Singapore Extended Zone Number 12' };
    expect((await api(service.url, service.ingestToken, 'POST', '/api/ingest/clusters', { clusters: [cluster] })).body).toMatchObject({ accepted: 1 });
    await fire([cluster.cluster_id, 'LongNamedClusterAlert']);
    expect((await api(service.url, admin, 'POST', '/api/fleet/refresh')).status).toBe(200);
    expect((await api(service.url, admin, 'POST', '/api/health/refresh')).status).toBe(200);
    const issueId = await issueIdOf('LongNamedClusterAlert');

    const page = await browser.page();
    await page.setViewportSize({ width: 390, height: 844 });
    await signIn(page, 'admin', PASSWORD);
    const sideways = () => page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    await page.goto(`/clusters/${encodeURIComponent(cluster.cluster_id)}`);
    await page.getByRole('heading', { level: 1, name }).waitFor();
    await page.getByRole('heading', { name: 'Open (1)' }).waitFor();
    expect(await sideways(), 'the cluster page').toBe(0);

    await page.goto(`/issues/${encodeURIComponent(issueId)}`);
    await page.getByRole('heading', { level: 1, name: 'LongNamedClusterAlert' }).waitFor();
    await page.getByText(`No other issues on ${name}`, { exact: false }).waitFor();
    await page.locator('.issue-inventory dd').first().waitFor();
    expect(await sideways(), 'the issue page').toBe(0);

    await page.goto('/health');
    await page.getByRole('heading', { level: 1, name: 'Health' }).waitFor();
    await page.getByLabel('Region').locator('option', { hasText: cluster.region }).waitFor({ state: 'attached' });
    expect(await sideways(), 'the health page').toBe(0);
  });
});
