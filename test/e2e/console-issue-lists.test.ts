// The issue lists' controls beyond the contract, in a real browser (Debian Chromium) through the whole local
// service. "Assigned to": Me shows the caller's issues, kept in the URL across a reload and Back from an issue;
// the Unassigned tile leads to as many as it says; admins choose people by name, viewers Anyone, Me and
// Unassigned without a refused read; an emptied list names the filters that emptied it. Headers: the service
// sorts the whole list by the column chosen, from page 1. A background read dims nothing.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as recompute } from '../../functions/recompute.js';
import { api, expectAccessible, signIn } from '../support/browser.js';
import { type ConsoleUnderTest, startConsole } from '../support/console.js';

const PASSWORD = 'console-assignee-admin-password';
const VIEWER = { email: 'vic-viewer@example.com', name: 'Vic Viewer', password: 'vic-assignee-password' };
let ui: ConsoleUnderTest;
/** The issues of the last 30 days as the API lists them, newest first, after the assignments below. */
let issues: { issue_id: string; issue_name: string; assignee: string }[];

beforeAll(async () => {
  delete process.env.LLM_PROVIDER;
  ui = await startConsole({ adminPassword: PASSWORD, demoClusters: 12, viewer: VIEWER });
  await recompute(); // the AI issues (rules grouping, no provider)
  const listed = (await api(ui.service.url, ui.admin, 'GET', '/api/issues?days=30&page_size=100')).body.issues;
  expect(listed.length).toBeGreaterThanOrEqual(4);
  // Two for the admin, one for the viewer, the rest nobody's.
  for (const [i, assignee] of [
    [0, 'me'],
    [2, 'me'],
    [1, VIEWER.email],
  ] as const)
    expect((await api(ui.service.url, ui.admin, 'PATCH', `/api/issues/${listed[i].issue_id}`, { assignee })).status).toBe(200);
  issues = (await api(ui.service.url, ui.admin, 'GET', '/api/issues?days=30&page_size=100')).body.issues;
}, 120_000);

afterAll(async () => {
  await ui?.close();
});

const assignedTo = (page: Page) => page.getByRole('combobox', { name: 'Assigned to' });
/** The issue names the table shows, in order. */
const shownNames = (page: Page) => page.getByRole('main').getByRole('table').getByRole('link').allTextContents();

describe('Alert issues: Assigned to', () => {
  it('says today’s window as a sentence does: “active today (UTC)”, “N issues today (UTC)”, not “in today”', async () => {
    const { total } = (await api(ui.service.url, ui.admin, 'GET', '/api/issues?days=0')).body;
    for (const [path, noun, plural] of [
      ['/issues?days=0', 'issue', 'issues'],
      ['/ai-issues?days=0', 'AI issue', 'AI issues'],
    ] as const) {
      await ui.adminPage.goto(path);
      const main = ui.adminPage.getByRole('main');
      await main.getByText(`Key figures for every ${noun} active today (UTC);`).waitFor();
      if (path.startsWith('/issues')) {
        const said = total === 0 ? 'No alert issues today (UTC).' : total === 1 ? '1 issue today (UTC)' : `${total.toLocaleString('en')} ${plural} today (UTC)`;
        await main.getByText(said).first().waitFor();
      }
      expect(await main.textContent()).not.toContain('in today');
    }
  });

  it('Me lists the caller’s issues only, kept in the URL across a reload and Back from an issue, and passes axe', async () => {
    await ui.adminPage.goto('/issues?days=30&page_size=100');
    await ui.adminPage.getByRole('heading', { level: 1, name: 'Alert issues' }).waitFor();
    await assignedTo(ui.adminPage).selectOption({ label: 'Me' });
    await ui.adminPage.waitForURL((u) => u.searchParams.get('assignee') === 'me');
    const mine = issues.filter((i) => i.assignee === 'admin').map((i) => i.issue_name);
    expect(mine).toHaveLength(2);
    await expect.poll(() => shownNames(ui.adminPage)).toEqual(mine);
    await ui.adminPage.getByRole('status').filter({ hasText: '2 issues in the last 30 days' }).waitFor();

    await ui.adminPage.reload();
    await expect.poll(() => shownNames(ui.adminPage)).toEqual(mine);
    expect(await assignedTo(ui.adminPage).inputValue()).toBe('me');

    await ui.adminPage.getByRole('main').getByRole('link', { name: mine[0] }).first().click();
    await ui.adminPage.getByRole('heading', { level: 1, name: mine[0] }).waitFor();
    await ui.adminPage.goBack();
    await ui.adminPage.getByRole('heading', { level: 1, name: 'Alert issues' }).waitFor();
    expect(new URL(ui.adminPage.url()).searchParams.get('assignee')).toBe('me');
    expect(await assignedTo(ui.adminPage).inputValue()).toBe('me');
    await expect.poll(() => shownNames(ui.adminPage)).toEqual(mine);
    await expectAccessible(ui.adminPage, 'alert issues assigned to me');
  });

  it('the Unassigned tile leads to as many issues as it says; admins choose a person by name', async () => {
    await ui.adminPage.goto('/issues?days=30&page_size=100');
    await ui.adminPage.getByRole('heading', { level: 1, name: 'Alert issues' }).waitFor();
    const tile = ui.adminPage.locator('.tile').filter({ hasText: 'Unassigned' }).locator('.value');
    await expect.poll(() => tile.textContent()).not.toBe('…');
    const unassigned = Number(await tile.textContent());
    expect(unassigned).toBe(issues.filter((i) => !i.assignee).length);
    // The tile's label leads to them, the other filters kept.
    await ui.adminPage.getByRole('region', { name: 'Key figures' }).getByRole('link', { name: 'Unassigned' }).click();
    await ui.adminPage.waitForURL((u) => u.searchParams.get('assignee') === '(none)' && u.searchParams.get('page_size') === '100');
    await expect.poll(() => assignedTo(ui.adminPage).inputValue()).toBe('(none)');
    await ui.adminPage
      .getByRole('status')
      .filter({ hasText: `${unassigned} issues in the last 30 days` })
      .waitFor();
    await expect.poll(() => shownNames(ui.adminPage)).toEqual(issues.filter((i) => !i.assignee).map((i) => i.issue_name));
    expect(unassigned).toBeGreaterThan(0);

    await assignedTo(ui.adminPage).selectOption({ label: `Vic Viewer (${VIEWER.email})` });
    await ui.adminPage.waitForURL((u) => u.searchParams.get('assignee') === VIEWER.email);
    await expect.poll(() => shownNames(ui.adminPage)).toEqual(issues.filter((i) => i.assignee === VIEWER.email).map((i) => i.issue_name));
    // The Assignee column names the account (an invitee's username is their email), the username as its tooltip.
    const cell = ui.adminPage.getByRole('main').getByRole('table').locator('tbody td span[title]').filter({ hasText: 'Vic Viewer' }).first();
    expect(await cell.getAttribute('title')).toBe(VIEWER.email);
    // A filter change goes back to page 1.
    await ui.adminPage.goto(`/issues?days=30&page_size=1&page=2`);
    await assignedTo(ui.adminPage).selectOption({ label: 'Me' });
    await ui.adminPage.waitForURL((u) => u.searchParams.get('assignee') === 'me' && !u.searchParams.has('page'));
  });

  it('a viewer chooses from Anyone, Me and Unassigned with no refused read, and an emptied list names its filters', async () => {
    const refused: string[] = [];
    ui.viewerPage.on('response', (r) => {
      if (r.status() === 403) refused.push(r.url());
    });
    await ui.viewerPage.goto('/issues?days=30');
    await ui.viewerPage.getByRole('heading', { level: 1, name: 'Alert issues' }).waitFor();
    expect(await assignedTo(ui.viewerPage).locator('option').allTextContents()).toEqual(['Anyone', 'Me', 'Unassigned']);
    await assignedTo(ui.viewerPage).selectOption({ label: 'Me' });
    await expect.poll(() => shownNames(ui.viewerPage)).toEqual(issues.filter((i) => i.assignee === VIEWER.email).map((i) => i.issue_name));
    // A viewer reads no accounts: the column gives the username.
    await ui.viewerPage.getByRole('main').getByRole('table').getByText(VIEWER.email, { exact: true }).waitFor();

    await ui.viewerPage.goto('/issues?days=30&assignee=me&status=Resolved&search=no-such-issue');
    await ui.viewerPage.getByText('No issue in the last 30 days matches these filters: assigned to you, matching “no-such-issue”, status Resolved.').waitFor();
    // A username from a shared link that the viewer's choices do not hold is still shown, and filtered on.
    await ui.viewerPage.goto('/issues?days=30&assignee=admin');
    expect(await assignedTo(ui.viewerPage).inputValue()).toBe('admin');
    await expect.poll(() => shownNames(ui.viewerPage)).toEqual(issues.filter((i) => i.assignee === 'admin').map((i) => i.issue_name));
    // One no account could bear (an edited link) filters nothing, as the controls show, rather than a 422.
    await ui.viewerPage.goto('/issues?days=30&page_size=100&assignee=Jane%20Doe');
    await expect.poll(() => shownNames(ui.viewerPage)).toEqual(issues.map((i) => i.issue_name));
    expect(await assignedTo(ui.viewerPage).inputValue()).toBe('');
    expect(refused).toEqual([]);
  });

  it('a window the route would refuse (hex, binary, a unit) in an edited link is read as the default, not sent', async () => {
    const refused: string[] = [];
    const listen = (r: { status(): number; url(): string }) => {
      if (r.status() === 422) refused.push(r.url());
    };
    ui.adminPage.on('response', listen);
    try {
      for (const days of ['0x10', '0b11', '7d']) {
        await ui.adminPage.goto(`/issues?days=${days}`);
        await ui.adminPage.getByRole('status').filter({ hasText: 'in the last 7 days' }).waitFor();
      }
    } finally {
      ui.adminPage.off('response', listen);
    }
    expect(refused).toEqual([]);
  });
});

describe('Alert issues: the Cluster and Customer filters', () => {
  it('list names as a person reads them (acme-prod-7 before acme-prod-13), where the service sorts by code point', async () => {
    const page = ui.viewerPage;
    const list = (url: URL) => url.pathname === '/api/issues';
    await page.route(list, async (route) => {
      const answer = await (await route.fetch()).json();
      answer.clusters = ['acme-prod-13', 'acme-prod-2', 'acme-prod-7', 'Acme-prod-1'];
      answer.customers = ['Customer 10', 'Customer 9'];
      await route.fulfill({ json: answer });
    });
    try {
      await page.goto('/issues?days=30');
      const options = (name: string) => page.getByRole('combobox', { name, exact: true }).locator('option');
      await expect.poll(() => options('Cluster').allTextContents()).toEqual(['All clusters', 'Acme-prod-1', 'acme-prod-2', 'acme-prod-7', 'acme-prod-13']);
      expect(await options('Customer').allTextContents()).toEqual(['All customers', 'Customer 9', 'Customer 10']);
    } finally {
      await page.unroute(list);
    }
  });
});

describe('Alert issues: order', () => {
  it('a header asks the service for the whole list in its order, from page 1, kept across a reload', async () => {
    const names = async (sort: string) =>
      (await api(ui.service.url, ui.admin, 'GET', `/api/issues?days=30&page_size=5&sort=${sort}`)).body.issues.map((i: { issue_name: string }) => i.issue_name);
    await ui.adminPage.goto('/issues?days=30&page_size=5&page=2');
    await ui.adminPage.getByRole('heading', { level: 1, name: 'Alert issues' }).waitFor();
    const header = ui.adminPage.getByRole('columnheader', { name: /^Severity/ });
    // First Critical, the whole list's and not one page's.
    await header.getByRole('button').click();
    await ui.adminPage.waitForURL((u) => u.searchParams.get('sort') === '-severity' && !u.searchParams.has('page'));
    await expect.poll(() => shownNames(ui.adminPage)).toEqual(await names('-severity'));
    expect(await header.getAttribute('aria-sort')).toBe('descending');
    await header.getByRole('button').click();
    await ui.adminPage.waitForURL((u) => u.searchParams.get('sort') === 'severity');
    await expect.poll(() => shownNames(ui.adminPage)).toEqual(await names('severity'));
    await ui.adminPage.reload();
    await expect.poll(() => shownNames(ui.adminPage)).toEqual(await names('severity'));
    expect(await header.getAttribute('aria-sort')).toBe('ascending');
    // The order is no filter: clearing the filters keeps it.
    await assignedTo(ui.adminPage).selectOption({ label: 'Unassigned' });
    await ui.adminPage.getByRole('button', { name: 'Clear filters' }).first().click();
    await ui.adminPage.waitForURL((u) => u.searchParams.get('sort') === 'severity' && !u.searchParams.has('assignee'));
    // A third click restores the list's default order, most recently seen first, and leaves it out of the URL.
    await header.getByRole('button').click();
    await ui.adminPage.waitForURL((u) => !u.searchParams.has('sort'));
    await expect.poll(() => shownNames(ui.adminPage)).toEqual(await names('-last_seen'));
    expect(await header.getAttribute('aria-sort')).toBeNull();
    // A column the service cannot sort by offers no sorting.
    expect(await ui.adminPage.getByRole('columnheader', { name: 'Ticket' }).getByRole('button').count()).toBe(0);
  });
});

describe('Alert issues: a background read', () => {
  it('of the list shown says "Updating…" without dimming its rows, which stay readable (axe)', async () => {
    const page = await ui.browser.page();
    await page.clock.install(); // the minute between two reads of a watch page, run at once
    await signIn(page, 'admin', PASSWORD);
    await page.goto('/issues?days=30&assignee=me');
    const mine = issues.filter((i) => i.assignee === 'admin').map((i) => i.issue_name);
    await expect.poll(() => shownNames(page)).toEqual(mine);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(/\/api\/issues\?/, async (route) => {
      await held;
      await route.continue();
    });
    await page.clock.runFor(61_000);
    await page.getByRole('status').filter({ hasText: 'Updating…' }).waitFor();
    expect(await page.locator('.issues-table').getAttribute('class')).toBe('issues-table');
    await expectAccessible(page, 'alert issues while read again');
    release();
    await page
      .getByRole('status')
      .filter({ hasText: /^2 issues/ })
      .waitFor();
  });
});

describe('AI issues: Assigned to', () => {
  it('Me lists the caller’s AI issues, kept across a reload', async () => {
    const listed = (await api(ui.service.url, ui.admin, 'GET', '/api/ai-issues?days=30&page_size=100')).body.issues;
    expect(listed.length).toBeGreaterThan(0);
    expect((await api(ui.service.url, ui.admin, 'PATCH', `/api/ai-issues/${listed[0].issue_id}`, { assignee: 'me' })).status).toBe(200);
    await ui.adminPage.goto('/ai-issues?days=30&page_size=100');
    await ui.adminPage.getByRole('heading', { level: 1, name: 'AI issues' }).waitFor();
    await assignedTo(ui.adminPage).selectOption({ label: 'Me' });
    await ui.adminPage.waitForURL((u) => u.searchParams.get('assignee') === 'me');
    await ui.adminPage.getByRole('status').filter({ hasText: '1 AI issue in the last 30 days' }).waitFor();
    await ui.adminPage.reload();
    await ui.adminPage.getByRole('status').filter({ hasText: '1 AI issue in the last 30 days' }).waitFor();
    expect(await assignedTo(ui.adminPage).inputValue()).toBe('me');
  });
});
