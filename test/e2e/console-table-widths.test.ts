// The console's tables on a 1280-px screen, in a real browser (Debian Chromium) through the whole local service,
// with the long addresses, names and notes that once pushed a table's last columns (People's actions among them)
// off the right edge: People, Rule proposals, Patrol's reports, a cluster's dimension tables and Fleet scroll
// sideways neither in their own region nor as a page, and Fleet's and Critical's "Top risk" show each name whole
// (it takes a second line rather than "Compactio… score 0"). The first four fit 1024 px too; on a phone a table may scroll
// in its own region, the page never does. People passes axe with its actions laid out as they now are.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userEtag } from '../../shared/http/etags.js';
import { addUser, api, apiLogin, expectAccessible, signIn } from '../support/browser.js';
import { type ConsoleUnderTest, startConsole } from '../support/console.js';

const PASSWORD = 'console-widths-admin-password';
const VIEWER = { email: 'vic-viewer@example.com', name: 'Vic Viewer', password: 'vic-widths-password' };
/** An admin whose address and name are long: they propose rule changes and trigger a patrol, so both lists name them. */
const LONG = {
  email: 'maximilian.alexander.featherstonehaugh-worthington@operations.example-enterprise.com',
  name: 'Maximilian Alexander Featherstonehaugh-Worthington',
  password: 'maximilian-widths-password',
};
const DEACTIVATED = 'priya.ramanathan-subramaniam@platform-reliability.example.co.uk';
const INVITED = 'jonathan.q.longname@infrastructure-monitoring.example.org';
const NO_DOTS = 'superlongusernamewithoutanydotsorseparators@example.com';

let ui: ConsoleUnderTest;
let clusterId: string;

beforeAll(async () => {
  delete process.env.LLM_PROVIDER; // the patrol is the rules engine's, answered at once
  ui = await startConsole({ adminPassword: PASSWORD, demoClusters: 24, viewer: VIEWER });
  const url = ui.service.url;
  await addUser(url, ui.admin, { ...LONG, role: 'admin' });
  await addUser(url, ui.admin, { email: NO_DOTS, name: 'Superlongdisplaynamewithoutspaces', role: 'superadmin', password: 'no-dots-widths-password' });
  await addUser(url, ui.admin, { email: DEACTIVATED, name: 'Priya Ramanathan-Subramaniam', role: 'viewer', password: 'priya-widths-password' });
  const priya = (await api(url, ui.admin, 'GET', '/api/settings/users')).body.users.find((u: { email: string }) => u.email === DEACTIVATED);
  const off = await fetch(`${url}/api/settings/users/${encodeURIComponent(DEACTIVATED)}`, {
    method: 'PATCH',
    headers: { Authorization: `Bearer ${ui.admin}`, 'Content-Type': 'application/json', 'If-Match': userEtag(priya.version) },
    body: JSON.stringify({ is_active: false }),
  });
  expect(off.status).toBe(200);
  expect(
    (await api(url, ui.admin, 'POST', '/api/settings/users/invite', { email: INVITED, display_name: 'Jonathan Q. Longname', role: 'viewer' })).status,
  ).toBe(200);

  // Two proposals by the long address (an admin's rule edit is a proposal), one by the viewer; one rejected with a note.
  const long = await apiLogin(url, LONG.email, LONG.password);
  const viewer = await apiLogin(url, VIEWER.email, VIEWER.password);
  for (const [token, n] of [
    [long, 1],
    [long, 2],
    [viewer, 3],
  ] as const) {
    const live = (await api(url, token, 'GET', '/api/settings/risk-rules')).body;
    const proposed = await api(url, token, 'PUT', '/api/settings/risk-rules', { content: `# widths ${n}\n${live.content}`, base_version: live.version });
    expect(proposed.body.status, JSON.stringify(proposed.body)).toBe('pending');
  }
  const pending = (await api(url, ui.admin, 'GET', '/api/settings/config-changes?status_filter=pending')).body.changes;
  const note = 'The thresholds would move too many clusters to Critical at once; please split this into one change per dimension.';
  expect((await api(url, ui.admin, 'POST', `/api/settings/config-changes/${pending[0].change_id}/review`, { action: 'reject', note })).status).toBe(200);

  // A patrol report the long address triggered (no model provider: the rules engine's scan, ended in its answer).
  const patrol = await api(url, long, 'POST', '/api/patrol/trigger');
  expect(patrol.body.status, JSON.stringify(patrol.body)).toBe('completed');

  clusterId = (await api(url, ui.admin, 'GET', '/api/fleet/scores')).body.scores[0].cluster_id;
}, 120_000);

afterAll(async () => {
  await ui?.close();
});

/** Each page, and what shows that its table has the rows above. */
const PAGES: { path: () => string; ready: string; fleet?: boolean }[] = [
  { path: () => '/users', ready: `table.users-table tr[data-email="${INVITED}"]` },
  { path: () => '/proposals', ready: 'table.proposals-table tbody tr:nth-child(3)' },
  { path: () => '/patrol', ready: '.patrol-reports table tbody tr' },
  { path: () => `/clusters/${encodeURIComponent(clusterId)}`, ready: 'table.cluster-dimensions >> nth=1' },
  { path: () => '/', ready: 'main table tbody tr[data-index]', fleet: true },
];

async function open(page: Page, path: string, ready: string): Promise<void> {
  await page.goto(path);
  await page.locator(ready).first().waitFor();
  await page.waitForLoadState('networkidle').catch(() => undefined);
}

/** Each table region wider inside than it shows (it scrolls sideways), and the page when it does, by how much. */
const overflow = (page: Page) =>
  page.evaluate(`(() => {
    const out = [...document.querySelectorAll('main .table-scroll')]
      .filter((r) => r.scrollWidth > r.clientWidth)
      .map((r) => (r.getAttribute('aria-label') ?? 'a table') + ' scrolls by ' + (r.scrollWidth - r.clientWidth) + ' px');
    const d = document.documentElement;
    if (d.scrollWidth > d.clientWidth) out.push('the page scrolls by ' + (d.scrollWidth - d.clientWidth) + ' px');
    return out;
  })()`) as Promise<string[]>;

describe('console tables on a 1280-px screen', { timeout: 120_000 }, () => {
  it('People, proposals, patrol reports, a cluster’s dimensions and Fleet fit: no table scrolls sideways', async () => {
    const page = await ui.browser.page({ viewport: { width: 1280, height: 900 } });
    await signIn(page, 'admin', PASSWORD);
    // Every page's, so a failure names them all.
    const found: Record<string, string[]> = {};
    for (const { path, ready } of PAGES) {
      await open(page, path(), ready);
      found[path()] = await overflow(page);
    }
    expect(found).toEqual(Object.fromEntries(PAGES.map(({ path }) => [path(), []])));

    // People: the long address's last action is on the screen, and the page passes axe.
    await open(page, '/users', `tr[data-email="${LONG.email}"]`);
    const remove = (await page.getByRole('button', { name: `Delete ${LONG.email}` }).boundingBox())!;
    expect(remove.x + remove.width).toBeLessThanOrEqual(1280);
    await expectAccessible(page, '/users at 1280 px');
  });

  it('Fleet’s and Critical’s Top risk show each name whole in its column: a second line, not "Compactio… score 0"', async () => {
    const page = await ui.browser.page({ viewport: { width: 1280, height: 900 } });
    await signIn(page, 'admin', PASSWORD);
    // Cut: the name's box narrower than its text (the ellipsis), or its text laid out past the cell's edge.
    const topRisks = async () =>
      (await page.evaluate(`[...document.querySelectorAll('main table tbody tr[data-index] .top-risk')].map((risk) => {
      const cell = risk.closest('td').getBoundingClientRect();
      const name = risk.querySelector('.top-risk-name');
      const range = document.createRange();
      range.selectNodeContents(risk);
      const cut = (name !== null && name.scrollWidth > name.clientWidth)
        || [...range.getClientRects()].some((r) => r.width > 0 && (r.right > cell.right + 0.5 || r.left < cell.left - 0.5));
      return { text: risk.textContent, cut };
    })`)) as { text: string; cut: boolean }[];
    await open(page, '/', 'main table tbody tr[data-index]');
    const risks = await topRisks();
    // "Memory Usage score 36" and longer took more than the column's one line.
    expect(risks.filter((r) => r.text.length >= 21).length, 'a top risk too long for one line').toBeGreaterThan(0);
    expect(risks.filter((r) => r.cut).map((r) => r.text)).toEqual([]);
    expect(await overflow(page)).toEqual([]);
    // The critical page's table of Warning and Critical clusters: the same column, 170 px.
    const warned = (await api(ui.service.url, ui.admin, 'GET', '/api/fleet/critical')).body.clusters.length;
    await open(page, '/critical', warned > 0 ? 'main table tbody tr[data-index] .top-risk' : 'main h1');
    const critical = await topRisks();
    expect(critical).toHaveLength(warned);
    expect(critical.filter((r) => r.cut).map((r) => r.text)).toEqual([]);
  });

  it('the pages but Fleet fit 1024 px too; on a phone only a table’s own region scrolls, never the page', async () => {
    const page = await ui.browser.page({ viewport: { width: 1024, height: 800 } });
    await signIn(page, 'admin', PASSWORD);
    const narrow = PAGES.filter(({ fleet }) => !fleet); // Fleet's fixed columns (1,230 px) scroll in their region under 1280 px
    const found: Record<string, string[]> = {};
    for (const { path, ready } of narrow) {
      await open(page, path(), ready);
      found[path()] = await overflow(page);
    }
    expect(found).toEqual(Object.fromEntries(narrow.map(({ path }) => [path(), []])));
    await page.setViewportSize({ width: 390, height: 800 });
    for (const { path, ready } of PAGES) {
      await open(page, path(), ready);
      expect(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'), `${path()} at 390 px`).toBe(0);
    }
  });
});
