// The rules workflow in a real browser on a small demo fleet (issue 19 §5): a
// viewer's edit in the YAML editor becomes a proposal; a superadmin finds it,
// sees its diff and impact, approves it, and the fleet page shows the moved
// clusters. A refused text (422) is marked at its line; a save based on an old
// version (409) is explained and can be re-applied. Metric sources are the
// fourth rule set, edited and proposed the same way (issue 20 §1). Ctrl+S saves
// only what the Save button would; an unsaved edit is kept for the tab across
// rule-set tabs and pages. General settings read by all, changed by superadmins. axe on every page.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalService } from '../../infra/local/service.js';
import { api, apiLogin, expectAccessible, signIn, type TestBrowser } from '../support/browser.js';
import { type ConsoleUnderTest, startConsole } from '../support/console.js';

const PASSWORD = 'console-rules-admin-password';
const VIEWER = { email: 'rita-viewer@example.com', name: 'Rita Viewer', password: 'rita-rules-password' };
let running: ConsoleUnderTest | undefined;
let service: LocalService;
let browser: TestBrowser;
let admin: string;
let superPage: Page;
let viewerPage: Page;

beforeAll(async () => {
  delete process.env.SES_FROM_ADDRESS;
  running = await startConsole({ adminPassword: PASSWORD, demoClusters: 12, viewer: VIEWER });
  ({ service, browser, admin, adminPage: superPage, viewerPage } = running);
}, 120_000);

afterAll(async () => {
  await running?.close();
});

const editor = (page: Page) => page.locator('.rules-editor .cm-content');
/** The keys of the unsaved work the tab keeps (kept-edit.ts, under session.tsx's keptKey). */
const KEPT_KEYS = "Object.keys(sessionStorage).filter((k) => k.startsWith('fleet-health.kept.'))";

/** Opens a rule set's tab and waits for its text in the editor. */
async function openRules(page: Page, set: 'health' | 'issue' | 'risk' | 'metric-sources'): Promise<void> {
  await page.goto(`/rules?set=${set}`);
  await page.getByRole('heading', { level: 1, name: 'Rules' }).waitFor();
  await editor(page).waitFor();
  await expect.poll(() => editor(page).textContent()).not.toBe('');
}

/** Replaces the editor's text, as typing or pasting would (the save's request then carries exactly this text). */
async function setText(page: Page, text: string): Promise<void> {
  await editor(page).fill(text);
  await page.getByText('unsaved changes').waitFor();
}

/** Proposes `text` from the Rules page as `page`'s user: the proposal's id, once the page says it waits for review. */
async function proposeOnRules(page: Page, set: 'health' | 'issue' | 'risk' | 'metric-sources', text: string): Promise<string> {
  await openRules(page, set);
  await setText(page, text);
  await page.getByRole('button', { name: 'Propose this change' }).click();
  const link = page.getByRole('status').getByRole('link', { name: /^proposal / });
  await link.waitFor();
  await page.getByText('proposed as it is, waiting for review', { exact: false }).waitFor();
  return (await link.textContent())!.replace('proposal ', '');
}

/** Rules keeps the edit holding `marker`, not as waiting for review: it may be proposed again. Then discards it. */
async function expectProposableAgain(page: Page, set: 'health' | 'issue' | 'risk' | 'metric-sources', marker: string): Promise<void> {
  await openRules(page, set);
  await expect.poll(() => editor(page).textContent()).toContain(marker);
  await expect.poll(() => page.getByRole('button', { name: 'Propose this change' }).isEnabled()).toBe(true);
  expect(await page.getByText('waiting for review', { exact: false }).count()).toBe(0);
  await page.getByRole('button', { name: 'Discard changes' }).click();
  await page.getByText('no changes', { exact: false }).waitFor();
}

/** Test clean-up: rejects the viewer's pending proposals, so later tests start under the per-user bound. */
async function rejectViewersPending(): Promise<void> {
  const waiting = (await api(service.url, admin, 'GET', '/api/settings/config-changes?status_filter=pending')).body.changes as {
    change_id: string;
    proposed_by: string;
  }[];
  for (const change of waiting.filter((c) => c.proposed_by === VIEWER.email))
    await api(service.url, admin, 'POST', `/api/settings/config-changes/${change.change_id}/review`, { action: 'reject', note: 'test clean-up' });
}

describe('a viewer’s edit becomes a proposal a superadmin approves', { timeout: 120_000 }, () => {
  it('proposes, reviews with diff and impact, approves, and the fleet page follows', async () => {
    const before = (await api(service.url, admin, 'GET', '/api/fleet/scores')).body.scores as {
      cluster_id: string;
      cluster_name: string;
      classification: string;
    }[];
    const live = (await api(service.url, admin, 'GET', '/api/settings/health-rules')).body as { content: string; version: number };
    // Lower the thresholds: every cluster scoring 1 or more is Healthy.
    const lowered = live.content.replace(/^(\s+healthy:\s*)80\b/m, '$11').replace(/^(\s+warning:\s*)60\b/m, '$10.5');
    expect(lowered).not.toBe(live.content);

    await openRules(viewerPage, 'health');
    await viewerPage.getByText(`${live.version === 0 ? '0 (the shipped default)' : live.version} · ETag "v${live.version}"`).waitFor();
    await expectAccessible(viewerPage, '/rules as a viewer');
    await setText(viewerPage, lowered);
    await viewerPage.getByText('unsaved changes').waitFor();
    const put = viewerPage.waitForRequest((r) => r.url().endsWith('/api/settings/health-rules') && r.method() === 'PUT');
    await viewerPage.getByRole('button', { name: 'Propose this change' }).click();
    const request = await put;
    expect(request.headers()['if-match']).toBe(`"v${live.version}"`);
    expect(request.postDataJSON()).toMatchObject({ content: lowered, base_version: live.version });
    const link = viewerPage.getByRole('status').getByRole('link', { name: /^proposal / });
    await link.waitFor();
    expect(await viewerPage.getByRole('status').filter({ hasText: 'Proposed' }).count()).toBe(1);
    const changeId = (await link.textContent())!.replace('proposal ', '');

    // Nothing applied yet; the viewer sees their proposal, and no review controls.
    expect((await api(service.url, admin, 'GET', '/api/settings/health-rules')).body.version).toBe(live.version);
    await link.click();
    await viewerPage.getByRole('heading', { level: 1, name: `Health rules: proposal ${changeId}` }).waitFor();
    await viewerPage.getByText('Waiting for a superadmin’s review.').or(viewerPage.getByText("Waiting for a superadmin's review.")).waitFor();
    expect(await viewerPage.getByRole('button', { name: /approve/i }).count()).toBe(0);
    await viewerPage.goto('/proposals');
    await viewerPage.getByRole('link', { name: changeId }).waitFor();

    // The superadmin finds it among the pending proposals, from the navigation (the filter is kept in the URL).
    await superPage.goto('/');
    await superPage.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Proposals' }).click();
    await superPage.getByRole('heading', { level: 1, name: 'Rule proposals' }).waitFor();
    await superPage.getByLabel('Status').selectOption('pending');
    await superPage.waitForURL((u) => u.searchParams.get('status') === 'pending');
    await superPage.reload();
    await superPage.getByRole('link', { name: changeId }).waitFor();
    expect(await superPage.getByLabel('Status').inputValue()).toBe('pending');
    await expectAccessible(superPage, '/proposals');
    await superPage.getByRole('link', { name: changeId }).click();

    // Its diff (both texts) and its impact, as the API computed it.
    const detail = (await api(service.url, admin, 'GET', `/api/settings/config-changes/${changeId}`)).body;
    expect(detail.impact.changed_count).toBeGreaterThan(0);
    await superPage.locator('.cm-mergeView').waitFor();
    await expect
      .poll(() => superPage.locator('.cm-merge-b .cm-changedLine').allTextContents())
      .toEqual(expect.arrayContaining([expect.stringContaining('healthy: 1')]));
    await expect
      .poll(() => superPage.locator('.cm-merge-a .cm-changedLine').allTextContents())
      .toEqual(expect.arrayContaining([expect.stringContaining('healthy: 80')]));
    await superPage.getByText(`${detail.impact.changed_count} of ${detail.impact.clusters_total} clusters would change class`).waitFor();
    const moved = detail.impact.changes as { cluster_id: string; cluster_name: string; from: string; to: string }[];
    const rows = superPage.locator('table.impact-changes tbody tr');
    expect(await rows.locator('th a').allTextContents()).toEqual(moved.map((c) => c.cluster_name));
    expect(await rows.first().locator('th a').getAttribute('href')).toBe(`/clusters/${encodeURIComponent(moved[0]!.cluster_id)}`);
    await expectAccessible(superPage, '/proposals/{id}');

    // Approve with a note.
    await superPage.getByLabel(/^Note/).fill('lower thresholds for the test');
    await superPage.getByRole('button', { name: 'Approve and apply' }).click();
    await superPage.getByText(/^Approved: version \d+ is live\.$/).waitFor();
    const approved = (await api(service.url, admin, 'GET', `/api/settings/config-changes/${changeId}`)).body;
    expect(approved).toMatchObject({ status: 'approved', review_note: 'lower thresholds for the test' });
    expect((await api(service.url, admin, 'GET', '/api/settings/health-rules')).body.content).toBe(lowered);
    // The preview (computed while pending only) gives way to what became of the proposal, not "No impact preview is available".
    const impact = superPage.getByRole('region', { name: 'Impact' });
    await impact.getByText(`Applied as version ${approved.applied_version}, the live version`).waitFor();
    expect(await impact.getByText('No impact preview is available').count()).toBe(0);
    expect(await impact.getByRole('link', { name: 'Fleet overview' }).getAttribute('href')).toBe('/');

    // The fleet page shows the moved cluster in its new class.
    const target = moved[0]!;
    expect(before.find((s) => s.cluster_id === target.cluster_id)?.classification).toBe(target.from);
    await superPage.goto(`/?q=${encodeURIComponent(target.cluster_name)}`);
    const row = superPage.locator('main table tbody tr[data-index]').filter({ hasText: target.cluster_name });
    await row.waitFor();
    await expect.poll(() => row.locator('.badge').first().textContent()).toBe(target.to);
  });
});

describe('refusals and conflicts', { timeout: 90_000 }, () => {
  it('marks a refused text (422) at its line and column', async () => {
    await openRules(superPage, 'risk');
    const text = (await api(service.url, admin, 'GET', '/api/settings/risk-rules')).body.content as string;
    const lines = text.split('\n');
    // An unclosed flow sequence on a known line.
    const at = lines.findIndex((l, i) => i > 0 && /^\S[^:#]*:\s*$/.test(l)) + 1;
    lines.splice(at, 0, '  broken: [1, 2');
    await setText(superPage, lines.join('\n'));
    const refused = superPage.waitForResponse((r) => r.url().endsWith('/api/settings/risk-rules') && r.request().method() === 'PUT');
    await superPage.getByRole('button', { name: 'Save and apply' }).click();
    const answer = await refused;
    expect(answer.status()).toBe(422);
    const detail = ((await answer.json()) as { detail: string }).detail;
    const [, line, col] = /at line (\d+), column (\d+)/.exec(detail)!;
    // Said at its bracket, not as the nesting the lines after it read as.
    expect(detail).toContain('`[` is never closed with `]`');
    expect([Number(line), Number(col)]).toEqual([at + 1, '  broken: ['.length]);
    const alert = superPage.getByRole('alert').filter({ hasText: 'Not saved: the rule set is not valid (422)' });
    await alert.getByText(`invalid YAML at line ${line}, column ${col}:`, { exact: false }).waitFor();
    // Said once: the service's message names the place, so no "Line N, column M:" goes before it.
    expect(await alert.textContent()).not.toContain(`Line ${line}, column ${col}:`);
    // Saved from below the editor, the refusal above it is brought into sight.
    await expect
      .poll(() =>
        alert.evaluate((box) => {
          const { top, bottom } = box.getBoundingClientRect();
          return top > -1 && bottom < box.ownerDocument.documentElement.clientHeight + 1;
        }),
      )
      .toBe(true);
    // "Go to line" puts the cursor there (CodeMirror renders only the lines in view), where the error is marked.
    await alert.getByRole('button', { name: `Go to line ${line}` }).click();
    await expect.poll(() => superPage.evaluate("document.activeElement?.classList.contains('cm-content')")).toBe(true);
    await expect.poll(() => superPage.locator('.rules-editor .cm-lineNumbers .cm-activeLineGutter').textContent()).toBe(line);
    await superPage.locator('.rules-editor .cm-activeLine .cm-lintRange-error').waitFor();
    await superPage.locator('.rules-editor .cm-lint-marker-error').first().waitFor();
    await expectAccessible(superPage, '/rules with a 422');
    expect((await api(service.url, admin, 'GET', '/api/settings/risk-rules')).body.content).toBe(text);
  });

  it('explains a stale save (409), keeps the text, and re-applies it on the live version: both changed the same line, so both stay, marked, until settled', async () => {
    await openRules(superPage, 'issue');
    const live = (await api(service.url, admin, 'GET', '/api/settings/issue-rules')).body as { content: string; version: number };
    const mine = `# edited in the console test\n${live.content}`;
    await setText(superPage, mine);
    // Someone else saves first.
    const other = await api(service.url, admin, 'PUT', '/api/settings/issue-rules', { content: `# someone else\n${live.content}` });
    expect(other.body).toMatchObject({ status: 'ok', applied: true });
    const newer = other.body.version as number;

    await superPage.getByRole('button', { name: 'Save and apply' }).click();
    const alert = superPage.getByRole('alert').filter({ hasText: `someone saved version ${newer} first` });
    await alert.waitFor();
    await alert.getByText(`Your edit was based on version ${live.version}, but version ${newer} was saved meanwhile (409 Conflict)`).waitFor();
    await superPage.getByText('unsaved changes').waitFor();
    await alert.getByRole('button', { name: `Compare with version ${newer}` }).click();
    await alert.locator('.cm-mergeView').waitFor();
    await expectAccessible(superPage, '/rules with a 409');

    await alert.getByRole('button', { name: `Re-apply my edit on version ${newer}` }).click();
    // Both put a line at the top: the merge keeps both between markers, marks them in the editor, and will not save them.
    await superPage
      .getByText(`Your edit is now based on version ${newer}, but it and version ${newer} change the same lines in 1 place`, { exact: false })
      .waitFor();
    await expect
      .poll(async () => (await editor(superPage).locator('.cm-line').allTextContents()).slice(0, 6))
      .toEqual(['<<<<<<< your edit', '# edited in the console test', '=======', '# someone else', `>>>>>>> version ${newer}`, live.content.split('\n')[0]]);
    await superPage.locator('.rules-editor .cm-lint-marker-error').first().waitFor();
    await superPage.getByText('conflict markers left: settle them to save').waitFor();
    expect(await superPage.getByRole('button', { name: 'Save and apply' }).isDisabled()).toBe(true);
    const settled = `# edited in the console test\n# someone else\n${live.content}`;
    await setText(superPage, settled);
    const resave = superPage.waitForRequest((r) => r.url().endsWith('/api/settings/issue-rules') && r.method() === 'PUT');
    await superPage.getByRole('button', { name: 'Save and apply' }).click();
    expect((await resave).headers()['if-match']).toBe(`"v${newer}"`);
    await superPage.getByText(`Applied: version ${newer + 1} is live.`, { exact: false }).waitFor();
    const saved = (await api(service.url, admin, 'GET', '/api/settings/issue-rules')).body;
    expect(saved).toMatchObject({ version: newer + 1, content: settled });

    // The history lists it, newest first.
    await superPage.getByRole('heading', { name: 'Version history' }).waitFor();
    await superPage.getByText(`Version ${newer + 1}`, { exact: true }).waitFor();
  });
});

describe('previewing an edit before saving it', { timeout: 90_000 }, () => {
  it('shows which clusters a health rules edit would move, as the API scores it, saving nothing; a changed or refused text says so', async () => {
    const live = (await api(service.url, admin, 'GET', '/api/settings/health-rules')).body as { content: string; version: number };
    // Healthy only at 99.5 and above: the clusters scoring below it move.
    const strict = live.content.replace(/^(\s+healthy:\s*)[\d.]+/m, '$199.5').replace(/^(\s+warning:\s*)[\d.]+/m, '$199');
    expect(strict).not.toBe(live.content);
    const expected = (await api(service.url, admin, 'POST', '/api/settings/health-rules/impact', { content: strict })).body;
    expect(expected.changed_count).toBeGreaterThan(0);

    await openRules(superPage, 'health');
    await setText(superPage, strict);
    const asked = superPage.waitForRequest((r) => r.url().endsWith('/api/settings/health-rules/impact') && r.method() === 'POST');
    await superPage.getByRole('button', { name: 'Preview impact' }).click();
    expect((await asked).postDataJSON()).toEqual({ content: strict });
    const preview = superPage.getByRole('region', { name: 'Impact of your edit' });
    await preview.getByText(`${expected.changed_count} of ${expected.clusters_total} clusters would change class`).waitFor();
    // Focus goes to the answer's heading: appearing below the buttons, nothing said it had come.
    const heading = preview.getByRole('heading', { name: 'Impact of your edit' });
    await expect.poll(() => heading.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    const rows = preview.locator('table.impact-changes tbody tr');
    expect(await rows.locator('th a').allTextContents()).toEqual(expected.changes.map((c: { cluster_name: string }) => c.cluster_name));
    expect(await preview.getByRole('columnheader', { name: 'With your edit' }).count()).toBe(2);
    await expectAccessible(superPage, '/rules with an impact preview');
    // A preview saves nothing: the live version is the one the page read.
    expect((await api(service.url, admin, 'GET', '/api/settings/health-rules')).body.version).toBe(live.version);

    // Before saving (which applies at once for a superadmin), the edit beside the version it is based on.
    const review = superPage.getByRole('button', { name: 'Show my changes' });
    await review.click();
    await expect.poll(() => superPage.locator('.rules-diff-heads').textContent()).toContain(`Version ${live.version}, which your edit is based on`);
    await expect
      .poll(() => superPage.locator('.rules-diff .cm-merge-b .cm-changedLine').allTextContents())
      .toEqual(expect.arrayContaining([expect.stringContaining('healthy: 99.5')]));
    await superPage.getByRole('button', { name: 'Hide my changes' }).click();
    expect(await superPage.locator('.rules-diff').count()).toBe(0);

    // Edited since, the preview no longer stands for the text; asked again, it does.
    await editor(superPage).fill(`# one more line\n${strict}`);
    await preview.getByText('The text changed since this preview.').waitFor();
    await preview.getByRole('button', { name: 'Preview again' }).click();
    await preview.getByText(`${expected.changed_count} of ${expected.clusters_total} clusters would change class`).waitFor();

    // A text a save would refuse has no preview: the refusal, marked at its line, as a save's.
    await editor(superPage).fill(`${strict}\n  broken: [1, 2`);
    await superPage.getByRole('button', { name: 'Preview impact' }).click();
    const refused = preview.getByRole('alert').filter({ hasText: 'No preview: the rule set is not valid (422)' });
    await refused.getByRole('button', { name: /^Go to line \d+$/ }).waitFor();
    await superPage.locator('.rules-editor .cm-lint-marker-error').first().waitFor();

    // A preview answered after the edit was discarded is dropped: no preview, no refusal marked in the live text.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await superPage.route('**/api/settings/health-rules/impact', async (route) => {
      await held;
      await route.continue();
    });
    await superPage.getByRole('button', { name: 'Preview impact' }).click();
    await preview.getByText('Loading the impact', { exact: false }).waitFor();
    await superPage.getByRole('button', { name: 'Discard changes' }).click();
    const late = superPage.waitForResponse((r) => r.url().endsWith('/api/settings/health-rules/impact'));
    release();
    expect((await late).status()).toBe(422);
    await superPage.evaluate('new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))');
    expect(await preview.count()).toBe(0);
    expect(await superPage.locator('.rules-editor .cm-lint-marker-error').count()).toBe(0);
    await superPage.unroute('**/api/settings/health-rules/impact');
    expect((await api(service.url, admin, 'GET', '/api/settings/health-rules')).body.version).toBe(live.version);
    // Issue rules move no cluster's class: their tab offers no preview.
    await openRules(superPage, 'issue');
    expect(await superPage.getByRole('button', { name: 'Preview impact' }).count()).toBe(0);
  });
});

describe('a stale proposal', { timeout: 60_000 }, () => {
  it('approving one that went stale while open is refused (409) with the reason; read again, it is marked stale and offers no approval', async () => {
    const viewer = await apiLogin(service.url, VIEWER.email, VIEWER.password);
    const live = (await api(service.url, viewer, 'GET', '/api/settings/risk-rules')).body as { content: string; version: number };
    const proposal = await api(service.url, viewer, 'PUT', '/api/settings/risk-rules', { content: `# proposed\n${live.content}`, base_version: live.version });
    expect(proposal.body).toMatchObject({ status: 'pending' });
    const changeId = proposal.body.change_id as string;

    await superPage.emulateMedia({ colorScheme: 'dark' });
    await superPage.goto(`/proposals/${changeId}`);
    await superPage.getByRole('heading', { level: 1, name: `Risk rules: proposal ${changeId}` }).waitFor();
    await superPage.getByRole('button', { name: 'Approve and apply' }).waitFor();
    // Someone applies another version while the page is open.
    const applied = await api(service.url, admin, 'PUT', '/api/settings/risk-rules', { content: `# applied first\n${live.content}` });
    await superPage.getByRole('button', { name: 'Approve and apply' }).click();
    await superPage.getByRole('alert').filter({ hasText: 'Not approved: the proposal is stale (409)' }).waitFor();
    await superPage.getByText(`this proposal was made on version ${live.version}, but version ${applied.body.version} is live now`, { exact: false }).waitFor();
    expect(await superPage.getByRole('button', { name: 'Approve and apply' }).count()).toBe(0);
    await superPage.locator('.cm-mergeView').waitFor();
    // Its own change, against the version it was made on: not the applied version's line, shown as if it removed it.
    await expect.poll(() => superPage.locator('.rules-diff-heads').textContent()).toContain(`Version ${live.version}, which it was based on`);
    await expectAccessible(superPage, '/proposals/{id} stale, dark');
    // On a phone the diff is one column.
    await superPage.setViewportSize({ width: 390, height: 844 });
    await superPage.getByText('it replaces are shown above them, marked as removed', { exact: false }).waitFor();
    await superPage.locator('.rules-diff .cm-changedLine').first().waitFor();
    expect(await superPage.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await expectAccessible(superPage, '/proposals/{id} on a phone, dark');
    await superPage.setViewportSize({ width: 1280, height: 720 });
    await superPage.locator('.cm-mergeView').waitFor();
    await superPage.getByRole('button', { name: 'Reject' }).click();
    await superPage.getByText('Rejected.').waitFor();
    expect((await api(service.url, admin, 'GET', `/api/settings/config-changes/${changeId}`)).body.status).toBe('rejected');
    await openRules(superPage, 'risk');
    await expectAccessible(superPage, '/rules, dark');
    await superPage.emulateMedia({ colorScheme: 'light' });
  });
});

describe('a proposal withdrawn by its proposer', { timeout: 60_000 }, () => {
  it('its proposer withdraws it from its page, and may propose that text again; the superadmin then finds it withdrawn, with nothing to review', async () => {
    const live = (await api(service.url, admin, 'GET', '/api/settings/risk-rules')).body as { content: string };
    const text = `# to withdraw\n${live.content}`;
    const changeId = await proposeOnRules(viewerPage, 'risk', text);

    // The superadmin sees no withdrawal (it is not theirs); the proposer does.
    await superPage.goto(`/proposals/${changeId}`);
    await superPage.getByRole('button', { name: 'Reject' }).waitFor();
    expect(await superPage.getByRole('button', { name: /withdraw/i }).count()).toBe(0);
    await viewerPage.goto(`/proposals/${changeId}`);
    const withdraw = viewerPage.getByRole('button', { name: 'Withdraw this proposal' });
    await withdraw.waitFor();
    await expectAccessible(viewerPage, '/proposals/{id} of its proposer');
    await withdraw.click();
    await viewerPage.getByText('Withdrawn: it will not be reviewed.').waitFor();
    await viewerPage.getByText('Withdrawn by', { exact: true }).waitFor();
    expect(await withdraw.count()).toBe(0);
    expect((await api(service.url, admin, 'GET', `/api/settings/config-changes/${changeId}`)).body).toMatchObject({
      status: 'withdrawn',
      reviewed_by: VIEWER.email,
    });

    await superPage.reload();
    await superPage.getByText('Withdrawn by', { exact: true }).waitFor();
    expect(await superPage.getByRole('button', { name: 'Reject' }).count()).toBe(0);
    await superPage.goto('/proposals?status=withdrawn');
    await superPage.getByRole('link', { name: changeId }).waitFor();

    // Back on Rules, the edit is kept, no longer "waiting for review", and may be proposed again.
    await expectProposableAgain(viewerPage, 'risk', '# to withdraw');
  });
});

describe('a proposal reviewed elsewhere', { timeout: 90_000 }, () => {
  it('a withdrawal that comes too late says so; Rules no longer holds the text as waiting; a decided proposal still shows its own change', async () => {
    const live = (await api(service.url, admin, 'GET', '/api/settings/risk-rules')).body as { content: string; version: number };
    const text = `# rejected elsewhere\n${live.content}`;
    const changeId = await proposeOnRules(viewerPage, 'risk', text);
    await viewerPage.goto(`/proposals/${changeId}`);
    const withdraw = viewerPage.getByRole('button', { name: 'Withdraw this proposal' });
    await withdraw.waitFor();
    // The superadmin rejects it while the proposer's page is open; the withdrawal then meets a 409.
    await api(service.url, admin, 'POST', `/api/settings/config-changes/${changeId}/review`, { action: 'reject', note: 'not now' });
    await withdraw.click();
    // Before, the form holding the error gave way to the decision, and nothing said the withdrawal had not happened.
    await viewerPage.getByRole('status').filter({ hasText: 'Not withdrawn:' }).waitFor();
    await viewerPage.getByText('not now').waitFor();

    // Rules: the text is no longer "waiting for review" (it said so until the page was left for good), and may be proposed again.
    await expectProposableAgain(viewerPage, 'risk', '# rejected elsewhere');

    // An approved proposal's page shows what it changed, against the version it was made on (the live one is its own now).
    const approvedText = `# approved, then shown\n${live.content}`;
    const viewer = await apiLogin(service.url, VIEWER.email, VIEWER.password);
    const proposed = (await api(service.url, viewer, 'PUT', '/api/settings/risk-rules', { content: approvedText })).body.change_id as string;
    await api(service.url, admin, 'POST', `/api/settings/config-changes/${proposed}/review`, { action: 'approve', note: '' });
    await viewerPage.goto(`/proposals/${proposed}`);
    await viewerPage.locator('.cm-mergeView').waitFor();
    await expect.poll(() => viewerPage.locator('.rules-diff-heads').textContent()).toContain(`Version ${live.version}, which it was based on`);
    await viewerPage.locator('.rules-diff .cm-changedLine').first().waitFor();
  });
});

describe('metric sources, the fourth rule set', { timeout: 90_000 }, () => {
  it('says why a proposal is refused when the proposer has too many waiting (409), keeping the text', async () => {
    const viewer = await apiLogin(service.url, VIEWER.email, VIEWER.password);
    const live = (await api(service.url, viewer, 'GET', '/api/settings/health-rules')).body.content as string;
    // Fill the viewer's pending proposals through the API, up to the service's limit.
    let refused: { status: number; body: Record<string, unknown> } | undefined;
    for (let i = 0; i < 20 && !refused; i++) {
      const answer = await api(service.url, viewer, 'PUT', '/api/settings/health-rules', { content: `# waiting ${i}\n${live}` });
      if (answer.status === 409) refused = answer;
      else expect(answer.body).toMatchObject({ status: 'pending' });
    }
    expect(refused?.body.detail).toMatch(/proposals waiting for review/);
    try {
      await openRules(viewerPage, 'health');
      const mine = `# one more\n${live}`;
      await setText(viewerPage, mine);
      await viewerPage.getByRole('button', { name: 'Propose this change' }).click();
      // Not the stale-save card (nobody saved first): the service's own sentence, saying what to do.
      const alert = viewerPage.getByRole('alert').filter({ hasText: 'proposals waiting for review' });
      await alert.getByText('Withdraw one, or wait for a superadmin', { exact: false }).waitFor();
      expect(await viewerPage.getByText('someone saved version', { exact: false }).count()).toBe(0);
      await viewerPage.getByText('unsaved changes').waitFor();
      await expectAccessible(viewerPage, '/rules with a 409 for too many proposals');
    } finally {
      await rejectViewersPending();
    }
  });

  it('has its own tab; a viewer’s edit is a proposal without impact that the superadmin approves from its page', async () => {
    const live = (await api(service.url, admin, 'GET', '/api/settings/metric-sources')).body as { content: string; version: number };
    const edited = live.content.replace(/^(\s+backfill_days:\s*)7\b/m, '$12');
    expect(edited).not.toBe(live.content);

    await viewerPage.goto('/rules');
    await viewerPage.getByRole('heading', { level: 1, name: 'Rules' }).waitFor();
    const tabs = viewerPage.getByRole('tablist', { name: 'Rule set' }).getByRole('tab');
    expect(await tabs.allTextContents()).toEqual(['Health rules', 'Issue rules', 'Risk rules', 'Metric sources']);
    await tabs.filter({ hasText: 'Metric sources' }).click();
    await viewerPage.waitForURL((u) => u.searchParams.get('set') === 'metric-sources');
    await editor(viewerPage).waitFor();
    await expect.poll(() => editor(viewerPage).textContent()).toContain('prometheus:');
    expect(await viewerPage.getByRole('tab', { name: 'Metric sources' }).getAttribute('aria-selected')).toBe('true');
    await viewerPage.getByText('Credentials never go here', { exact: false }).waitFor();
    await viewerPage.getByRole('heading', { name: 'Metric sources YAML' }).waitFor();
    await expectAccessible(viewerPage, '/rules?set=metric-sources as a viewer');

    await setText(viewerPage, edited);
    const put = viewerPage.waitForRequest((r) => r.url().endsWith('/api/settings/metric-sources') && r.method() === 'PUT');
    await viewerPage.getByRole('button', { name: 'Propose this change' }).click();
    expect((await put).headers()['if-match']).toBe(`"v${live.version}"`);
    const link = viewerPage.getByRole('status').getByRole('link', { name: /^proposal / });
    await link.waitFor();
    const changeId = (await link.textContent())!.replace('proposal ', '');
    expect((await api(service.url, admin, 'GET', '/api/settings/metric-sources')).body.version).toBe(live.version);

    await superPage.goto('/proposals?status=pending');
    const row = superPage.locator('tr').filter({ has: superPage.getByRole('link', { name: changeId }) });
    await row.getByText('Metric sources').waitFor();
    await row.getByRole('link', { name: changeId }).click();
    await superPage.getByRole('heading', { level: 1, name: `Metric sources: proposal ${changeId}` }).waitFor();
    await superPage.getByText('Metric sources say where metrics are pulled from', { exact: false }).waitFor();
    await superPage.locator('.cm-mergeView').waitFor();
    await expectAccessible(superPage, '/proposals/{id} of metric sources');
    await superPage.getByRole('button', { name: 'Approve and apply' }).click();
    await superPage.getByText(/^Approved: version \d+ is live\.$/).waitFor();
    const applied = (await api(service.url, admin, 'GET', '/api/settings/metric-sources')).body;
    expect(applied).toMatchObject({ version: live.version + 1, content: edited });

    // The rules page shows the approved version live, and its history.
    await openRules(superPage, 'metric-sources');
    await superPage.getByText(`${live.version + 1} · ETag "v${live.version + 1}"`).waitFor();
    await superPage.getByText(`Version ${live.version + 1}`, { exact: true }).waitFor();
  });
});

describe('saving from the keyboard, and an edit kept for the tab', { timeout: 120_000 }, () => {
  /** PUTs of a rule set the page sends from now on. */
  const putsOf = (page: Page) => {
    const puts: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'PUT' && new URL(r.url()).pathname.startsWith('/api/settings/')) puts.push(new URL(r.url()).pathname);
    });
    return puts;
  };
  /**
   * Ctrl+S in the editor, then a request sent and answered after it: a save sends its PUT within the key's
   * handler (rules.tsx `save` reaches fetch before its first await), and the browser reports requests in the
   * order it sends them, so a PUT the key started is among `putsOf` by the time this returns. No fixed wait.
   */
  const pressSave = async (page: Page) => {
    await editor(page).press('Control+s');
    expect(await page.evaluate(() => fetch('/api/health-check').then((r) => r.status))).toBe(200);
  };

  it('Ctrl+S saves only what the Save button would: not an unchanged text, not one behind the live version, not the text just proposed', async () => {
    const [superTab, viewerTab] = await Promise.all([browser.page(), browser.page()]);
    await Promise.all([signIn(superTab, 'admin', PASSWORD), signIn(viewerTab, VIEWER.email, VIEWER.password)]);
    const superPuts = putsOf(superTab);
    const viewerPuts = putsOf(viewerTab);

    // No changes: the button is disabled, and Ctrl+S sends nothing (it applied the live text again as a new version).
    const live = (await api(service.url, admin, 'GET', '/api/settings/risk-rules')).body as { content: string; version: number };
    await openRules(superTab, 'risk');
    expect(await superTab.getByRole('button', { name: 'Save and apply' }).isDisabled()).toBe(true);
    await pressSave(superTab);
    expect(superPuts).toEqual([]);
    expect((await api(service.url, admin, 'GET', '/api/settings/risk-rules')).body.version).toBe(live.version);

    // Behind the live version (409): the button is disabled until the edit is re-applied, and so is Ctrl+S.
    await setText(superTab, `# mine, from the keyboard test\n${live.content}`);
    await api(service.url, admin, 'PUT', '/api/settings/risk-rules', { content: `# saved first\n${live.content}` });
    await superTab.getByRole('button', { name: 'Save and apply' }).click();
    const stale = superTab.getByRole('alert').filter({ hasText: 'first' });
    await stale.getByRole('button', { name: /^Re-apply my edit/ }).waitFor();
    expect(superPuts).toEqual(['/api/settings/risk-rules']);
    expect(await superTab.getByRole('button', { name: 'Save and apply' }).isDisabled()).toBe(true);
    await pressSave(superTab);
    expect(superPuts).toEqual(['/api/settings/risk-rules']);
    await stale.getByRole('button', { name: /^Discard my edit/ }).click();

    // A viewer's proposal: the same text again is neither proposable by the button nor by Ctrl+S (it used up a pending slot); a further edit is.
    try {
      const health = (await api(service.url, admin, 'GET', '/api/settings/health-rules')).body.content as string;
      await openRules(viewerTab, 'health');
      await setText(viewerTab, `# proposed once\n${health}`);
      await viewerTab.getByRole('button', { name: 'Propose this change' }).click();
      await viewerTab
        .getByRole('status')
        .getByRole('link', { name: /^proposal / })
        .waitFor();
      expect(viewerPuts).toEqual(['/api/settings/health-rules']);
      await viewerTab.getByText('proposed as it is, waiting for review', { exact: false }).waitFor();
      expect(await viewerTab.getByRole('button', { name: 'Propose this change' }).isDisabled()).toBe(true);
      await pressSave(viewerTab);
      expect(viewerPuts).toEqual(['/api/settings/health-rules']);
      await editor(viewerTab).fill(`# proposed once, then edited\n${health}`);
      await expect.poll(() => viewerTab.getByRole('button', { name: 'Propose this change' }).isEnabled()).toBe(true);
      expect(await viewerTab.getByText('proposed as it is', { exact: false }).count()).toBe(0);
    } finally {
      await rejectViewersPending();
    }
  });

  it('keeps an unsaved edit across rule-set tabs and leaving the page; based on an older version, it is re-applied on the live one, whose change stays', async () => {
    const page = await browser.page();
    await signIn(page, 'admin', PASSWORD);
    const live = (await api(service.url, admin, 'GET', '/api/settings/issue-rules')).body as { content: string; version: number };
    const mine = `# kept for the tab\n${live.content}`;
    await openRules(page, 'issue');
    await setText(page, mine);

    // Another tab and back: the editor holds the edit, still unsaved.
    await page.getByRole('tab', { name: 'Risk rules' }).click();
    await page.getByRole('heading', { name: 'Risk rules YAML' }).waitFor();
    await expect.poll(() => editor(page).textContent()).not.toContain('# kept for the tab');
    await page.getByRole('tab', { name: 'Issue rules' }).click();
    await page.getByRole('heading', { name: 'Issue rules YAML' }).waitFor();
    await expect.poll(() => editor(page).textContent()).toContain('# kept for the tab');
    await page.getByText('unsaved changes').waitFor();
    // Kept per user and set, under the session's prefix (signing out removes it).
    expect(await page.evaluate(KEPT_KEYS)).toEqual(['fleet-health.kept.admin/rules.issue']);

    // Another page and back, after someone saved a newer version: the edit, and the card to re-apply it.
    const theirs = `${live.content.trimEnd()}\n# someone else, meanwhile\n`;
    const other = await api(service.url, admin, 'PUT', '/api/settings/issue-rules', { content: theirs });
    const newer = other.body.version as number;
    await page.goto('/');
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    await openRules(page, 'issue');
    await expect.poll(() => editor(page).textContent()).toContain('# kept for the tab');
    await page.getByRole('heading', { name: `Version ${newer} is live now` }).waitFor();
    await page.locator('.rules-facts').getByText(`based on version ${live.version}`, { exact: false }).waitFor();
    expect(await page.getByRole('button', { name: 'Save and apply' }).isDisabled()).toBe(true);
    await expectAccessible(page, '/rules with a kept edit behind the live version');
    await page.getByRole('button', { name: `Re-apply my edit on version ${newer}` }).click();
    await page.getByText(`Your edit is now based on version ${newer}, whose own changes are kept.`, { exact: false }).waitFor();
    // Mine at the top, theirs at the end: one text with both.
    const both = `# kept for the tab\n${theirs}`;
    const saved = page.waitForRequest((r) => r.url().endsWith('/api/settings/issue-rules') && r.method() === 'PUT');
    await page.getByRole('button', { name: 'Save and apply' }).click();
    expect((await saved).postDataJSON()).toMatchObject({ content: both, base_version: newer });
    await page.getByText(`Applied: version ${newer + 1} is live.`, { exact: false }).waitFor();
    expect((await api(service.url, admin, 'GET', '/api/settings/issue-rules')).body.content).toBe(both);

    // Saved: nothing is kept any more.
    await expect.poll(() => page.evaluate(KEPT_KEYS)).toEqual([]);
    await openRules(page, 'issue');
    await page.getByText('no changes', { exact: false }).waitFor();
  });

  it('keeps an unsaved edit over a session that ended (401) for its user, not for the next user to sign in', async () => {
    const page = await browser.page();
    await signIn(page, 'admin', PASSWORD);
    const live = (await api(service.url, admin, 'GET', '/api/settings/risk-rules')).body as { content: string };
    const mine = `# across an ended session\n${live.content}`;
    await openRules(page, 'risk');
    await setText(page, mine);
    const endSession = async () => {
      // The tab's token revoked, as an expiry would end it: the next call answers 401.
      const token = (await page.evaluate("JSON.parse(sessionStorage.getItem('fleet-health.session')).token")) as string;
      expect((await api(service.url, token, 'POST', '/api/auth/logout')).status).toBe(200);
      await page.reload();
      await page.getByText('Your session has ended', { exact: false }).waitFor();
    };
    await endSession();
    expect(await page.evaluate(KEPT_KEYS)).toEqual(['fleet-health.kept.admin/rules.risk']);
    await signIn(page, 'admin', PASSWORD);
    await page.getByRole('heading', { name: 'Risk rules YAML' }).waitFor();
    await expect.poll(() => editor(page).textContent()).toContain('# across an ended session');
    await page.getByText('unsaved changes').waitFor();

    await endSession();
    await signIn(page, VIEWER.email, VIEWER.password);
    expect(await page.evaluate(KEPT_KEYS)).toEqual([]);
    await page.getByRole('heading', { name: 'Risk rules YAML' }).waitFor();
    await expect.poll(() => editor(page).textContent()).not.toContain('# across an ended session');
    await page.close();
  });

  it('goes back to the shipped default: version 0, last in the history, loads into the editor and saves as the next version', async () => {
    const live = (await api(service.url, admin, 'GET', '/api/settings/issue-rules')).body as { content: string };
    expect((await api(service.url, admin, 'PUT', '/api/settings/issue-rules', { content: `# before going back\n${live.content}` })).body).toMatchObject({
      applied: true,
    });
    const history = (await api(service.url, admin, 'GET', '/api/settings/issue-rules/versions')).body as { shipped_default: string; current_version: number };
    await openRules(superPage, 'issue');
    await superPage.getByRole('button', { name: 'Load version 0 into the editor' }).click();
    await superPage.getByText('unsaved changes').waitFor();
    await superPage.getByRole('button', { name: 'Save and apply' }).click();
    await superPage.getByText(`Applied: version ${history.current_version + 1} is live.`, { exact: false }).waitFor();
    const restored = (await api(service.url, admin, 'GET', '/api/settings/issue-rules')).body;
    expect(restored).toMatchObject({ content: history.shipped_default, version: history.current_version + 1 });
  });
});

describe('general settings', { timeout: 60_000 }, () => {
  it('a superadmin changes the methods; a viewer reads them and changes nothing', async () => {
    await superPage.goto('/settings');
    await superPage.getByRole('heading', { level: 1, name: 'General settings' }).waitFor();
    // What each switch does, as it is: AI health scoring is recorded but not built.
    await superPage
      .getByRole('group', { name: 'Health scoring method' })
      .getByText('Recorded only: scores still come from the health rule set', { exact: false })
      .waitFor();
    const group = superPage.getByRole('group', { name: 'Alert criticality method' });
    await group.getByText('The patrol weighs the AI-grouped issues', { exact: false }).waitFor();
    await group.getByRole('radio', { name: /^AI/ }).check();
    await superPage.getByRole('button', { name: 'Save settings' }).click();
    await superPage.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await api(service.url, admin, 'GET', '/api/settings/general')).body).toMatchObject({ alert_criticality_method: 'ai' });
    await expectAccessible(superPage, '/settings');
    await superPage.reload();
    expect(await superPage.getByRole('group', { name: 'Alert criticality method' }).getByRole('radio', { name: /^AI/ }).isChecked()).toBe(true);

    // Another superadmin saves the health method while this page is open: this page's save is refused (409), not
    // allowed to put the old health method back; read again, the page shows it and keeps the choice made here.
    await group.getByRole('radio', { name: /^Rules/ }).check();
    expect((await api(service.url, admin, 'PUT', '/api/settings/general', { health_scoring_method: 'ai', alert_criticality_method: 'ai' })).status).toBe(200);
    await superPage.getByRole('button', { name: 'Save settings' }).click();
    const conflict = superPage.getByRole('alert').filter({ hasText: 'after you read them: nothing was changed' });
    await conflict.waitFor();
    // When, as the console writes times (not 2026-12-04T09:28:50.437Z); and that the choice made here is kept, to save again.
    expect(await conflict.textContent()).toMatch(/ at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC after you read them/);
    await conflict.getByText('with your choices kept: check them and save again').waitFor();
    const health = superPage.getByRole('group', { name: 'Health scoring method' });
    await health.getByRole('radio', { name: /^AI/ }).and(superPage.locator(':checked')).waitFor();
    expect(await group.getByRole('radio', { name: /^Rules/ }).isChecked()).toBe(true);
    await superPage.getByRole('button', { name: 'Save settings' }).click();
    await superPage.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await api(service.url, admin, 'GET', '/api/settings/general')).body).toEqual({ health_scoring_method: 'ai', alert_criticality_method: 'rules' });
    await api(service.url, admin, 'PUT', '/api/settings/general', { health_scoring_method: 'rules', alert_criticality_method: 'ai' });

    // A viewer reads them (where the scores it sees come from), and changes nothing.
    await viewerPage.goto('/settings');
    await viewerPage.getByRole('heading', { level: 1, name: 'General settings' }).waitFor();
    await viewerPage.getByText('Only a superadmin changes these settings.').waitFor();
    const criticality = viewerPage.getByRole('group', { name: 'Alert criticality method' });
    await criticality.getByRole('radio', { name: /^AI/ }).and(viewerPage.locator(':checked')).waitFor();
    expect(await viewerPage.getByRole('radio', { disabled: false }).count()).toBe(0);
    expect(await viewerPage.getByRole('button', { name: 'Save settings' }).count()).toBe(0);
    await expectAccessible(viewerPage, '/settings (viewer)');
  });
});

describe('times', { timeout: 60_000 }, () => {
  /** `iso` as the console writes it: UTC to the minute, labelled "UTC". */
  const inUtc = (iso: string) => `${new Date(iso).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

  it('a proposal’s time reads UTC, in the list and on its page, in a browser in New York', async () => {
    const viewer = await apiLogin(service.url, VIEWER.email, VIEWER.password);
    const live = (await api(service.url, viewer, 'GET', '/api/settings/health-rules')).body.content as string;
    const proposed = await api(service.url, viewer, 'PUT', '/api/settings/health-rules', { content: `# read in UTC\n${live}` });
    expect(proposed.body).toMatchObject({ status: 'pending' });
    const changeId = proposed.body.change_id as string;
    const { proposed_at: at } = (await api(service.url, admin, 'GET', `/api/settings/config-changes/${changeId}`)).body;
    try {
      const page = await browser.page();
      // What Playwright's timezoneId context option sets, on this page's own context.
      await (await page.context().newCDPSession(page)).send('Emulation.setTimezoneOverride', { timezoneId: 'America/New_York' });
      await signIn(page, 'admin', PASSWORD, '/proposals?status=pending');
      await page.getByRole('heading', { level: 1, name: 'Rule proposals' }).waitFor();
      expect(await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone')).toBe('America/New_York');
      const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: changeId, exact: true }) });
      await row.waitFor();
      expect(await row.locator('td').nth(3).textContent()).toBe(inUtc(at)); // Proposed

      await row.getByRole('link', { name: changeId, exact: true }).click();
      const byline = page.locator('.proposal-header .muted');
      await byline.waitFor();
      expect(await byline.textContent()).toBe(`proposed by ${VIEWER.email}, ${inUtc(at)}, based on version ${proposed.body.base_version}`);
      expect(await byline.locator('time').getAttribute('datetime')).toBe(at);
    } finally {
      await rejectViewersPending();
    }
  });
});
