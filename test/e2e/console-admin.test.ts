// The console's people, audit, LLM cost and dashboards pages in a real browser
// (Debian Chromium) through the whole local service: an invite made in the console
// yields an activation link that signs the invitee in, and a password reset a link whose
// page sets a new password; the 409 guards are explained;
// keyboard focus follows the delete confirmation; the audit log shows the invite,
// keeps its filter in the URL and explains a page past the last; LLM cost renders
// for a superadmin and is neither listed nor shown for a viewer; the dashboards page
// explains the 503 and, with the local BI server (test/support/fake-embed.ts), names
// EMBED_DASHBOARD when it is unset, embeds the configured dashboard, renews its tokens
// before they expire and acquires a new session when the old one has ended. The metric
// sources page shows the shipped default's disabled source and a row per metric, and
// starts a pull; pointed at a Prometheus that refuses most queries it shows the partial
// run, refusals and errors; it is neither listed nor shown for a viewer. axe on each page.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalService } from '../../infra/local/service.js';
import { batchPut } from '../../shared/db/client.js';
import { writeAudit } from '../../shared/db/audit.js';
import type { AuditAction } from '../../shared/db/audit-actions.js';
import { recordUsage } from '../../shared/db/llm-usage.js';
import { acquireLock, releaseLock } from '../../shared/db/locks.js';
import { PULL_LOCK } from '../../shared/metric-pull/lock.js';
import { shippedValue } from '../../shared/rules/defaults.js';
import { forgetEmbedLogins } from '../../shared/embed/provider.js';
import { addUser, api, apiLogin, expectAccessible, launchBrowser, signIn, type TestBrowser } from '../support/browser.js';
import { type FakeEmbed, startFakeEmbed } from '../support/fake-embed.js';
import { startTestService } from '../support/local-service.js';

const PASSWORD = 'console-admin-password';
const VIEWER = { email: 'vic-viewer@example.com', password: 'vic-viewer-password' };
const EMBED = { clientId: 'console-embed-client', clientSecret: 'console-embed-S3CRET-0123456789abcdef' };
let service: LocalService;
let browser: TestBrowser;
let fake: FakeEmbed;
let admin: string;
let adminEmail: string;
let adminPage: Page;
let viewerPage: Page;

beforeAll(async () => {
  delete process.env.SES_FROM_ADDRESS;
  for (const name of Object.keys(process.env)) if (name.startsWith('EMBED_')) delete process.env[name];
  [service, fake] = await Promise.all([
    startTestService({ adminPassword: PASSWORD, demoClusters: 0 }),
    startFakeEmbed({ clientId: EMBED.clientId, clientSecret: EMBED.clientSecret }),
  ]);
  [browser, admin] = await Promise.all([launchBrowser(service.url), apiLogin(service.url, 'admin', PASSWORD)]);
  const users = await api(service.url, admin, 'GET', '/api/settings/users');
  adminEmail = users.body.users.find((u: { role: string }) => u.role === 'superadmin').email;
  await addUser(service.url, admin, { email: VIEWER.email, name: 'Vic Viewer', role: 'viewer', password: VIEWER.password });
  [adminPage, viewerPage] = await Promise.all([browser.page(), browser.page()]);
  await Promise.all([signIn(adminPage, 'admin', PASSWORD), signIn(viewerPage, VIEWER.email, VIEWER.password)]);
}, 120_000);

afterAll(async () => {
  for (const name of Object.keys(process.env)) if (name.startsWith('EMBED_')) delete process.env[name];
  await browser?.close();
  await service?.stop();
  await fake?.close();
});

/** A new page (its own context) whose browser runs in New York: the console's times must still read UTC. */
async function pageInNewYork(): Promise<Page> {
  const page = await browser.page();
  // What Playwright's timezoneId context option sets, on this page's own context.
  await (await page.context().newCDPSession(page)).send('Emulation.setTimezoneOverride', { timezoneId: 'America/New_York' });
  return page;
}

/** Counts the requests for `path` the page sends from now on, until stop(). */
function countRequests(page: Page, path: string): { count(): number; stop(): void } {
  let count = 0;
  const onRequest = (r: { url(): string }) => {
    if (new URL(r.url()).pathname === path) count++;
  };
  page.on('request', onRequest);
  return { count: () => count, stop: () => void page.off('request', onRequest) };
}

async function open(page: Page, path: string, heading: string): Promise<void> {
  await page.goto(path);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

describe('your account', { timeout: 90_000 }, () => {
  it('changes your password from the name in the top bar: this tab stays signed in, your other sessions end', async () => {
    const who = { email: 'pia-password@example.com', password: 'pia-old-password' };
    const invite = await api(service.url, admin, 'POST', '/api/settings/users/invite', { email: who.email, display_name: 'Pia Password', role: 'viewer' });
    const activated = await api(service.url, admin, 'POST', '/api/auth/activate', { token: invite.body.activation_token, password: who.password });
    expect(activated.status).toBe(200);
    const [page, other] = await Promise.all([browser.page(), browser.page()]);
    await Promise.all([signIn(page, who.email, who.password), signIn(other, who.email, who.password)]);

    await page.getByRole('link', { name: /^Pia Password · viewer/ }).click();
    await page.getByRole('heading', { level: 1, name: 'Your account' }).waitFor();
    await page.getByLabel('Current password').fill('not-my-password');
    await page.getByLabel('New password', { exact: true }).fill('pia-new-password');
    await page.getByLabel('Repeat the new password').fill('pia-new-password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('alert').getByText('The current password is not right: nothing was changed.').waitFor();

    // Longer than the service takes (1,024): said at the field as it is typed, and nothing is sent.
    const posts: string[] = [];
    page.on('request', (r) => r.method() === 'POST' && posts.push(new URL(r.url()).pathname));
    await page.getByLabel('Current password').fill(who.password);
    await page.getByLabel('New password', { exact: true }).fill('p'.repeat(1025));
    await page.getByLabel('Repeat the new password').fill('p'.repeat(1025));
    await expect.poll(() => page.locator('#password-rule').textContent()).toBe('At most 1,024 characters (1 too many).');
    expect(await page.getByRole('button', { name: 'Change password' }).isDisabled()).toBe(true);
    await page.getByLabel('Repeat the new password').press('Enter');
    expect(posts).toEqual([]);

    await page.getByLabel('New password', { exact: true }).fill('pia-new-password');
    await page.getByLabel('Repeat the new password').fill('pia-new-password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('status').getByText('Your password is changed, and your other sessions have ended.').waitFor();
    await expectAccessible(page, '/account after a change');
    // This tab's new token works; the other tab's next call finds its session ended.
    await page.getByRole('link', { name: 'Fleet', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Fleet' }).waitFor();
    await other.goto('/issues');
    await other.getByText(/Your session has ended/).waitFor();
    // The service's reason as a sentence between the console's own, not in brackets.
    expect(await other.getByText(/Your session has ended/).textContent()).toMatch(/^Your session has ended\. [A-Z][^()]*\. Sign in again\.$/);
    expect((await api(service.url, admin, 'POST', '/api/auth/login', { username: who.email, password: 'pia-new-password' })).status).toBe(200);
  });
});

describe('people', { timeout: 90_000 }, () => {
  const INVITEE = 'ines-invitee@example.com';

  it('an invite from the console yields an activation link that signs the invitee in', async () => {
    await open(adminPage, '/users', 'People');
    await adminPage.locator(`tr[data-email="${VIEWER.email}"]`).waitFor();
    // An address without a dot in its domain, which type=email takes and the service refuses ("email: Invalid email
    // address"): said at the field, and not sent.
    const invites: string[] = [];
    const onRequest = (r: { method(): string; url(): string }) => r.method() === 'POST' && invites.push(r.url());
    adminPage.on('request', onRequest);
    await adminPage.getByLabel('Email').fill('ines@example');
    await adminPage.getByLabel('Display name').fill('Ines Invitee');
    await adminPage.getByRole('button', { name: 'Send invitation' }).click();
    // The browser's bubble says "Please match the requested format." with the title under it.
    expect(
      await adminPage
        .getByLabel('Email')
        .evaluate((e) => [(e as unknown as { validity: { patternMismatch: boolean } }).validity.patternMismatch, e.getAttribute('title')]),
    ).toEqual([true, 'An address such as name@example.com']);
    // Enter with the name still missing: the browser says so at that field and takes the focus there (the button,
    // held back, did nothing and said nothing). Nothing is sent.
    await adminPage.getByLabel('Display name').fill('');
    await adminPage.getByLabel('Email').fill('ines@example.com');
    await adminPage.getByLabel('Email').press('Enter');
    const nameField = adminPage.getByLabel('Display name');
    await expect.poll(() => nameField.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    adminPage.off('request', onRequest);
    expect(invites).toEqual([]);
    await adminPage.getByLabel('Email').fill(INVITEE);
    await adminPage.getByLabel('Display name').fill('Ines Invitee');
    await adminPage.locator('form.users-invite-form').getByLabel('Role').selectOption('admin');
    await adminPage.getByRole('button', { name: 'Send invitation' }).click();
    const field = adminPage.getByLabel('Activation link');
    await field.waitFor();
    // Why no mail went: here, no sender is configured (the service says why, the page says it in words).
    expect(await adminPage.locator('.users-invited').textContent()).toContain(
      'no mail was sent: the service has no mail sender configured (SES_FROM_ADDRESS).',
    );
    // The sign-in form asks for a username: an invitee's is their email, and the inviter is told so.
    expect(await adminPage.locator('.users-invited').textContent()).toContain(`they sign in with their email, ${INVITEE}, as the username.`);
    const firstLink = await field.inputValue();
    expect(firstLink).toMatch(new RegExp(`^${service.url}/activate#token=[\\w-]{43}$`));
    const invited = adminPage.locator(`tr[data-email="${INVITEE}"]`);
    await invited.locator('.users-status', { hasText: /^Invited until \d{4}-\d\d-\d\d \d\d:\d\d UTC$/ }).waitFor();
    // Pending: its role and state change only by a new invitation (a delete stays).
    expect(await invited.getByRole('button', { name: /^Reactivate / }).count()).toBe(0);
    expect(await invited.getByRole('combobox').count()).toBe(0);
    await expectAccessible(adminPage, '/users after an invite');

    // "Invite again…" fills the form from the row; sent, it hands out a new link and the first one stops working.
    await invited.getByRole('button', { name: `Invite ${INVITEE} again` }).click();
    const form = adminPage.locator('form.users-invite-form');
    // Filled by the click's re-render: waited for, not read at once (a loaded machine reads the form before it).
    await expect.poll(() => form.getByLabel('Email').inputValue()).toBe(INVITEE);
    expect(await form.getByLabel('Display name').inputValue()).toBe('Ines Invitee');
    expect(await form.getByLabel('Role').inputValue()).toBe('admin');
    expect(await adminPage.getByLabel('Activation link').count()).toBe(0);
    // Typed in capitals too, the address is the pending one's: the form says the earlier link will stop working.
    await form.getByLabel('Email').fill(INVITEE.toUpperCase());
    const replaces = `${INVITEE} has an invitation not yet accepted: sending this one replaces it, and the link sent before stops working.`;
    const note = adminPage.locator('.users-invite').getByText(replaces);
    await note.waitFor();
    // Said as it appears (a live region there all along), and tied to the field.
    expect(await note.getAttribute('aria-live')).toBe('polite');
    expect(await form.getByLabel('Email').getAttribute('aria-describedby')).toBe(await note.getAttribute('id'));
    await adminPage.getByRole('button', { name: 'Send invitation' }).click();
    await field.waitFor();
    // Said again once done, with the address as the account keeps it (lower case).
    expect(await adminPage.locator('.users-invited').textContent()).toContain('Invited again: the link sent before no longer works.');
    expect(await adminPage.locator('.users-invited').textContent()).toContain(`they sign in with their email, ${INVITEE}, as the username.`);
    const link = await field.inputValue();
    expect(link).not.toBe(firstLink);
    const stale = await api(service.url, admin, 'POST', '/api/auth/activate', {
      token: decodeURIComponent(firstLink.split('#token=')[1]!),
      password: 'ines-invitee-password',
    });
    expect(stale.status).toBe(400);

    const fresh = await browser.page();
    await fresh.goto(link);
    await fresh.getByLabel('New password').fill('ines-invitee-password');
    await fresh.getByLabel('Repeat it').fill('ines-invitee-password');
    await fresh.getByRole('button', { name: 'Activate and sign in' }).click();
    await fresh.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await fresh.locator('.who').textContent()).toContain('admin');
    // An admin sees the people page but no role, deactivate or delete controls (superadmin only).
    await open(fresh, '/users', 'People');
    await fresh.locator(`tr[data-email="${INVITEE}"]`).getByText('Active', { exact: true }).waitFor();
    expect(await fresh.getByRole('button', { name: /^Delete / }).count()).toBe(0);
    expect(await fresh.locator('form.users-invite-form').getByLabel('Role').locator('option').allTextContents()).toEqual(['admin', 'viewer']);
    await expectAccessible(fresh, '/users as an admin');

    // Demoted meanwhile: the tab follows the role the service holds now (read on load), not the one it signed in with.
    expect((await api(service.url, admin, 'PATCH', `/api/settings/users/${encodeURIComponent(INVITEE)}`, { role: 'viewer' })).status).toBe(200);
    await fresh.goto('/');
    await fresh.reload();
    await expect.poll(() => fresh.locator('.who').textContent()).toContain('viewer');
    await expect.poll(() => fresh.getByRole('link', { name: 'People' }).count()).toBe(0);
    await fresh.close();
  });

  it("a password reset from the row ends the person's sessions and yields a link whose page sets a new password and signs them in", async () => {
    const who = { email: 'rita-reset@example.com', password: 'rita-old-password' };
    const invite = await api(service.url, admin, 'POST', '/api/settings/users/invite', { email: who.email, display_name: 'Rita Reset', role: 'viewer' });
    expect((await api(service.url, admin, 'POST', '/api/auth/activate', { token: invite.body.activation_token, password: who.password })).status).toBe(200);
    const theirs = await browser.page();
    await signIn(theirs, who.email, who.password);

    await open(adminPage, '/users', 'People');
    const row = adminPage.locator(`tr[data-email="${who.email}"]`);
    await row.getByRole('button', { name: `Reset the password of ${who.email}` }).click();
    // The question replaces the button, and keyboard focus moves to its confirming button.
    const confirm = adminPage.getByRole('button', { name: `Confirm resetting the password of ${who.email}` });
    await expect.poll(() => confirm.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    await confirm.click();
    const field = adminPage.getByLabel('Password reset link');
    await field.waitFor();
    // The row stays and its confirmation has gone: focus moves to the link, which is what is to be done next.
    await expect.poll(() => field.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    expect(await adminPage.locator('.users-outcome').textContent()).toMatch(/until \d{4}-\d\d-\d\d \d\d:\d\d UTC\./);
    expect(await adminPage.locator('.users-outcome').textContent()).toContain('no mail was sent: the service has no mail sender configured');
    const link = await field.inputValue();
    expect(link).toMatch(new RegExp(`^${service.url}/reset-password#token=[\\w-]{43}$`));
    await row.locator('.users-reset', { hasText: /^Password reset until \d{4}-\d\d-\d\d \d\d:\d\d UTC$/ }).waitFor();
    // One's own password is changed with the current one, not reset here.
    expect(await adminPage.getByRole('button', { name: `Reset the password of ${adminEmail}` }).count()).toBe(0);
    await expectAccessible(adminPage, '/users after a password reset');

    await theirs.goto('/issues');
    await theirs.getByText(/Your session has ended/).waitFor();
    const fresh = await browser.page();
    await fresh.goto(link);
    await fresh.getByRole('heading', { level: 1, name: 'Choose a new password' }).waitFor();
    await expectAccessible(fresh, '/reset-password');
    await fresh.getByLabel('New password', { exact: true }).fill('rita-new-password');
    await fresh.getByLabel('Repeat it').fill('rita-new-password');
    await fresh.getByRole('button', { name: 'Set password and sign in' }).click();
    await fresh.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await fresh.locator('.who').textContent()).toContain('viewer');
    expect((await api(service.url, admin, 'POST', '/api/auth/login', { username: who.email, password: 'rita-new-password' })).status).toBe(200);
    await open(adminPage, '/users', 'People');
    await row.waitFor();
    expect(await row.locator('.users-reset').count()).toBe(0);
    await Promise.all([theirs.close(), fresh.close()]);
  });

  it('offers no change of your own account (the service refuses them all), and applies a role change', async () => {
    await open(adminPage, '/users', 'People');
    const mine = adminPage.locator(`tr[data-email="${adminEmail}"]`);
    await mine.getByText('Your own account: another superadmin changes it.').waitFor();
    expect(await mine.locator('select, button').count()).toBe(0);
    expect(await mine.locator('.users-role').textContent()).toBe('superadmin');
    // Another's row has them.
    await adminPage.getByRole('button', { name: `Delete ${VIEWER.email}` }).waitFor();
    await expectAccessible(adminPage, '/users');

    await adminPage.getByLabel(`Role of ${VIEWER.email}`).selectOption('admin');
    await adminPage.getByRole('button', { name: `Save role for ${VIEWER.email}` }).click();
    await adminPage.getByText(`${VIEWER.email} is now admin, active.`).waitFor();
    const users = await api(service.url, admin, 'GET', '/api/settings/users');
    expect(users.body.users.find((u: { email: string }) => u.email === VIEWER.email).role).toBe('admin');
    await adminPage.getByLabel(`Role of ${VIEWER.email}`).selectOption('viewer');
    await adminPage.getByRole('button', { name: `Save role for ${VIEWER.email}` }).click();
    await adminPage.getByText(`${VIEWER.email} is now viewer, active.`).waitFor();
  });

  it('an invitation refused for now (503 with Retry-After) says when to try again, as every other refusal does', async () => {
    await open(adminPage, '/users', 'People');
    await adminPage.route('**/api/settings/users/invite', (route) =>
      route.fulfill({
        status: 503,
        headers: { 'content-type': 'application/problem+json', 'retry-after': '7' },
        body: JSON.stringify({
          type: 'about:blank',
          title: 'Service Unavailable',
          status: 503,
          detail: 'The mail sender could not be read; try again shortly.',
        }),
      }),
    );
    try {
      await adminPage.getByLabel('Email').fill('later@example.com');
      await adminPage.getByLabel('Display name').fill('Later Invitee');
      await adminPage.getByRole('button', { name: 'Send invitation' }).click();
      const alert = adminPage.getByRole('alert').filter({ hasText: 'The invitation was not created' });
      await alert.waitFor();
      expect(await alert.textContent()).toContain(
        'The mail sender could not be read; try again shortly.A passing refusal: nothing was changed, and the service asks for another try in 7 s.',
      );
    } finally {
      await adminPage.unroute('**/api/settings/users/invite');
      await adminPage.getByLabel('Email').fill('');
      await adminPage.getByLabel('Display name').fill('');
    }
  });

  it('a half-filled invitation outlives a session that ends, for the same user in the tab; a sent one is not kept', async () => {
    const page = await browser.page();
    await signIn(page, 'admin', PASSWORD, '/users');
    await page.getByRole('heading', { level: 1, name: 'People' }).waitFor();
    await page.getByLabel('Email').fill('kept-invitee@example.com');
    await page.getByLabel('Display name').fill('Kept Invitee');
    await page.locator('.users-invite select').selectOption('admin');
    // The session ends meanwhile (signed out elsewhere: its token is revoked), and the next call finds it so.
    const token = await page.evaluate<string>("JSON.parse(sessionStorage.getItem('fleet-health.session') ?? '{}').token");
    expect((await api(service.url, token, 'POST', '/api/auth/logout')).status).toBe(200);
    await page.goto('/issues');
    await page.getByText(/Your session has ended/).waitFor();
    // Signed in again (back on the page the session ended on), then to People.
    await signIn(page, 'admin', PASSWORD);
    await page.getByRole('link', { name: 'People' }).click();
    await page.getByRole('heading', { level: 1, name: 'People' }).waitFor();
    expect(await page.getByLabel('Email').inputValue()).toBe('kept-invitee@example.com');
    expect(await page.getByLabel('Display name').inputValue()).toBe('Kept Invitee');
    expect(await page.locator('.users-invite select').inputValue()).toBe('admin');

    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByRole('status').getByText('kept-invitee@example.com', { exact: false }).first().waitFor();
    expect(await page.getByLabel('Email').inputValue()).toBe('');
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'People' }).waitFor();
    expect(await page.getByLabel('Email').inputValue()).toBe('');
    expect(await page.evaluate("Object.keys(sessionStorage).filter((k) => k.startsWith('fleet-health.kept.'))")).toEqual([]);
    await page.close();
  });

  it('an account deleted by someone else while the page is open: the refused change says so and its row goes', async () => {
    const who = { email: 'gus-gone@example.com', name: 'Gus Gone', role: 'viewer' as const, password: 'gus-gone-password' };
    await addUser(service.url, admin, who);
    await open(adminPage, '/users', 'People');
    const row = adminPage.locator(`tr[data-email="${who.email}"]`);
    await row.waitFor();
    expect((await api(service.url, admin, 'DELETE', `/api/settings/users/${encodeURIComponent(who.email)}`)).status).toBe(200);
    await adminPage.getByLabel(`Role of ${who.email}`).selectOption('admin');
    await adminPage.getByRole('button', { name: `Save role for ${who.email}` }).click();
    await adminPage.getByRole('alert').getByText(`Could not change the role of ${who.email}`, { exact: false }).waitFor();
    // Read again: the row of the account that is no more goes, its controls with it.
    await row.waitFor({ state: 'detached' });
  });

  it('an account another superadmin changed while the page is open: the change made on the row read is refused, said so, and the row shows it as it is now', async () => {
    const who = { email: 'cora-changed@example.com', name: 'Cora Changed', role: 'viewer' as const, password: 'cora-changed-password' };
    await addUser(service.url, admin, who);
    await open(adminPage, '/users', 'People');
    const row = adminPage.locator(`tr[data-email="${who.email}"]`);
    await row.getByRole('button', { name: `Deactivate ${who.email}` }).waitFor();
    // Changed elsewhere (another superadmin's session): made an admin; this page has not read the list since.
    expect((await api(service.url, admin, 'PATCH', `/api/settings/users/${encodeURIComponent(who.email)}`, { role: 'admin' })).status).toBe(200);
    await row.getByRole('button', { name: `Deactivate ${who.email}` }).click();
    const refused = adminPage.getByRole('alert').filter({ hasText: `Could not deactivate ${who.email}` });
    await refused.waitFor();
    expect(await refused.textContent()).toContain(
      'someone else changed this account after this page read it, so nothing was changed. It is now admin, active.',
    );
    expect(await refused.textContent()).not.toContain('keeps at least one active superadmin');
    // Read again: the row shows the role the other superadmin gave; the account was not deactivated.
    await expect.poll(() => adminPage.getByLabel(`Role of ${who.email}`).inputValue()).toBe('admin');
    const stored = (await api(service.url, admin, 'GET', '/api/settings/users')).body.users.find((u: { email: string }) => u.email === who.email);
    expect(stored).toMatchObject({ role: 'admin', is_active: true });
    // On the row as it is now, the same click is made.
    await row.getByRole('button', { name: `Deactivate ${who.email}` }).click();
    await adminPage.getByText(`${who.email} is now admin, inactive.`).waitFor();
    expect((await api(service.url, admin, 'DELETE', `/api/settings/users/${encodeURIComponent(who.email)}`)).status).toBe(200);
  });

  it('an account deactivated by another superadmin while the page is open: its password reset is refused, said so, and nothing is reset', async () => {
    const who = { email: 'rex-reset-stale@example.com', name: 'Rex Stale', role: 'viewer' as const, password: 'rex-stale-password' };
    await addUser(service.url, admin, who);
    await open(adminPage, '/users', 'People');
    const row = adminPage.locator(`tr[data-email="${who.email}"]`);
    await row.getByRole('button', { name: `Reset the password of ${who.email}` }).waitFor();
    // Deactivated elsewhere; this page has not read the list since.
    expect((await api(service.url, admin, 'PATCH', `/api/settings/users/${encodeURIComponent(who.email)}`, { is_active: false })).status).toBe(200);
    await row.getByRole('button', { name: `Reset the password of ${who.email}` }).click();
    await adminPage.getByRole('button', { name: `Confirm resetting the password of ${who.email}` }).click();
    const refused = adminPage.getByRole('alert').filter({ hasText: `Could not reset the password of ${who.email}` });
    await refused.waitFor();
    expect(await refused.textContent()).toContain(
      'someone else changed this account after this page read it, so nothing was changed. It is now viewer, inactive.',
    );
    const stored = (await api(service.url, admin, 'GET', '/api/settings/users')).body.users.find((u: { email: string }) => u.email === who.email);
    expect(stored).toMatchObject({ is_active: false, password_reset_pending: false });
  });

  it('wraps a display name of one long word in its column: email, role, status and actions stay in view', async () => {
    const email = 'lou-longname@example.com';
    const name = `Lou${'longname'.repeat(15)}xyzab`; // 128 characters, the most a display name takes, and no space
    expect((await api(service.url, admin, 'POST', '/api/settings/users/invite', { email, display_name: name, role: 'viewer' })).status).toBe(200);
    await open(adminPage, '/users', 'People');
    const row = adminPage.locator(`tr[data-email="${email}"]`);
    await row.waitFor();
    const table = adminPage.locator('table.users-table');
    expect(await table.evaluate((t) => t.scrollWidth - t.parentElement!.clientWidth)).toBeLessThanOrEqual(0);
    const viewport = adminPage.viewportSize()!.width;
    const actions = (await row.getByRole('button', { name: `Delete ${email}` }).boundingBox())!;
    expect(actions.x + actions.width).toBeLessThanOrEqual(viewport);
    expect((await api(service.url, admin, 'DELETE', `/api/settings/users/${encodeURIComponent(email)}`)).status).toBeLessThan(300);
  });
});

describe('people, demoted while the page is open', { timeout: 90_000 }, () => {
  it("a refused change (403) says so without the note on the service's guards, and the controls the role lost go, the change said", async () => {
    const who = { email: 'sol-super@example.com', password: 'sol-super-password' };
    await addUser(service.url, admin, { email: who.email, name: 'Sol Super', role: 'superadmin', password: who.password });
    const page = await browser.page();
    await signIn(page, who.email, who.password);
    await open(page, '/users', 'People');
    const deactivate = page.getByRole('button', { name: `Deactivate ${VIEWER.email}` });
    await deactivate.waitFor();
    // Another superadmin demotes them; this tab has not looked since.
    expect((await api(service.url, admin, 'PATCH', `/api/settings/users/${encodeURIComponent(who.email)}`, { role: 'admin' })).status).toBe(200);
    await deactivate.click();
    const refused = page.getByRole('alert').filter({ hasText: `Could not deactivate ${VIEWER.email}` });
    await refused.waitFor();
    expect(await refused.textContent()).not.toContain('keeps at least one active superadmin');
    // The 403 had the account read again: an admin's page, without the superadmin's controls.
    await expect.poll(() => page.locator('.who').textContent()).toContain('admin');
    await expect.poll(() => page.getByRole('button', { name: /^Deactivate / }).count()).toBe(0);
    // And says why the controls went, until dismissed.
    const why = page.getByRole('status').filter({ hasText: 'Your role changed from superadmin to admin while you were signed in' });
    await why.waitFor();
    await expectAccessible(page, '/users after a demotion, the role change said');
    await why.getByRole('button', { name: 'Dismiss' }).click();
    expect(await why.count()).toBe(0);
    await page.close();
    await api(service.url, admin, 'DELETE', `/api/settings/users/${encodeURIComponent(who.email)}`);
  });
});

describe('people, by keyboard', { timeout: 60_000 }, () => {
  const roleOf = async (email: string) =>
    (await api(service.url, admin, 'GET', '/api/settings/users')).body.users.find((u: { email: string }) => u.email === email).role;

  it('arrow keys through the role options change no role; Escape puts it back; "Save role" applies it and focus returns to the select', async () => {
    await open(adminPage, '/users', 'People');
    const patches: string[] = [];
    const onRequest = (r: { method(): string; url(): string }) => {
      if (r.method() === 'PATCH') patches.push(r.url());
    };
    adminPage.on('request', onRequest);
    try {
      const select = adminPage.getByLabel(`Role of ${VIEWER.email}`);
      const save = adminPage.getByRole('button', { name: `Save role for ${VIEWER.email}` });
      expect(await select.inputValue()).toBe('viewer');
      await select.focus();
      await adminPage.keyboard.press('ArrowUp');
      await adminPage.keyboard.press('ArrowUp');
      await expect.poll(() => select.inputValue()).toBe('superadmin');
      await save.waitFor();
      expect(patches).toEqual([]);
      expect(await roleOf(VIEWER.email)).toBe('viewer');

      await adminPage.keyboard.press('Escape');
      await expect.poll(() => select.inputValue()).toBe('viewer');
      expect(await save.count()).toBe(0);

      await adminPage.keyboard.press('ArrowUp');
      await expect.poll(() => select.inputValue()).toBe('admin');
      await adminPage.keyboard.press('Tab');
      await expect.poll(() => adminPage.evaluate("document.activeElement?.getAttribute('aria-label')")).toBe(`Save role for ${VIEWER.email}`);
      await expectAccessible(adminPage, '/users with a role picked, not saved');
      await adminPage.keyboard.press('Enter');
      await adminPage.getByText(`${VIEWER.email} is now admin, active.`).waitFor();
      expect(patches).toHaveLength(1);
      expect(await roleOf(VIEWER.email)).toBe('admin');
      await expect.poll(() => adminPage.evaluate("document.activeElement?.getAttribute('aria-label')")).toBe(`Role of ${VIEWER.email}`);
    } finally {
      adminPage.off('request', onRequest);
    }
    // Back to a viewer, for the tests that sign in as one.
    await adminPage.getByLabel(`Role of ${VIEWER.email}`).selectOption('viewer');
    await adminPage.getByRole('button', { name: `Save role for ${VIEWER.email}` }).click();
    await adminPage.getByText(`${VIEWER.email} is now viewer, active.`).waitFor();
  });

  it('focus moves to the confirmation when "Delete…" opens it, and back to "Delete…" on Cancel', async () => {
    await open(adminPage, '/users', 'People');
    const focused = () =>
      adminPage.evaluate(
        "document.activeElement === document.body ? 'the page (body)' : (document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent)",
      );
    await adminPage.getByRole('button', { name: `Delete ${VIEWER.email}` }).focus();
    await adminPage.keyboard.press('Enter');
    await expect.poll(focused).toBe(`Confirm deleting ${VIEWER.email}`);
    await adminPage.keyboard.press('Tab');
    await expect.poll(focused).toBe('Cancel');
    await adminPage.keyboard.press('Enter');
    await expect.poll(focused).toBe(`Delete ${VIEWER.email}`);
    expect(await adminPage.getByRole('button', { name: `Confirm deleting ${VIEWER.email}` }).count()).toBe(0);
    expect((await api(service.url, admin, 'GET', '/api/settings/users')).body.users.some((u: { email: string }) => u.email === VIEWER.email)).toBe(true);
  });

  it('Escape takes back "Delete for good?" and "Reset password…" as Cancel does: focus returns to the button, nothing is done', async () => {
    await open(adminPage, '/users', 'People');
    const focused = () => adminPage.evaluate("document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent");
    for (const [ask, confirm] of [
      [`Delete ${VIEWER.email}`, `Confirm deleting ${VIEWER.email}`],
      [`Reset the password of ${VIEWER.email}`, `Confirm resetting the password of ${VIEWER.email}`],
    ]) {
      await adminPage.getByRole('button', { name: ask, exact: true }).focus();
      await adminPage.keyboard.press('Enter');
      await expect.poll(focused).toBe(confirm);
      await adminPage.keyboard.press('Escape');
      await expect.poll(focused).toBe(ask);
      expect(await adminPage.getByRole('button', { name: confirm }).count()).toBe(0);
    }
    const viewer = (await api(service.url, admin, 'GET', '/api/settings/users')).body.users.find((u: { email: string }) => u.email === VIEWER.email);
    expect(viewer).toMatchObject({ is_active: true });
    expect(viewer.password_reset_expires_at ?? null).toBeNull();
  });
});

describe('audit', { timeout: 60_000 }, () => {
  it('shows the invite, keeps the action filter in the URL across a reload, and passes axe', async () => {
    await open(adminPage, '/audit', 'Audit log');
    await adminPage.locator('table.audit-table tbody tr').first().waitFor();
    await adminPage.getByLabel('Action').selectOption('invite');
    await adminPage.waitForURL((u) => u.searchParams.get('action') === 'invite');
    const { body } = await api(service.url, admin, 'GET', '/api/settings/audit?action=invite');
    const targets = body.entries.map((e: { target: string }) => e.target);
    expect(targets).toContain('ines-invitee@example.com');
    await expect.poll(() => adminPage.locator('table.audit-table tbody tr > td:nth-child(4)').allTextContents()).toEqual(targets);
    await expect.poll(async () => new Set(await adminPage.locator('.audit-action').allTextContents())).toEqual(new Set(['invite']));
    await adminPage.reload();
    await expect.poll(() => adminPage.locator('table.audit-table tbody tr > td:nth-child(4)').allTextContents()).toEqual(targets);
    expect(await adminPage.getByLabel('Action').inputValue()).toBe('invite');
    await expectAccessible(adminPage, '/audit?action=invite');

    // An action the log does not know (an edited link), which the API refuses with a 422: every action, no problem shown.
    await open(adminPage, '/audit?action=invites', 'Audit log');
    await expect.poll(() => adminPage.locator('table.audit-table tbody tr').count()).toBeGreaterThan(0);
    expect(await adminPage.getByLabel('Action').inputValue()).toBe('');
    expect(await adminPage.locator('.audit-page [role="alert"]').count()).toBe(0);
  });

  it("keeps a detail's keys (before, after) whole beside a long value, which wraps", async () => {
    const who = { email: 'ulla-update@example.com', name: 'Ulla Update', role: 'viewer' as const, password: 'ulla-update-password' };
    await addUser(service.url, admin, who);
    expect((await api(service.url, admin, 'PATCH', `/api/settings/users/${encodeURIComponent(who.email)}`, { role: 'admin' })).status).toBe(200);
    // A laptop's width, where the Detail column is narrow.
    const page = await browser.page();
    await page.setViewportSize({ width: 1024, height: 768 });
    await signIn(page, 'admin', PASSWORD, '/audit?action=user_update');
    const detail = page.locator('table.audit-table tbody tr', { hasText: who.email }).locator('.audit-detail');
    await detail.waitFor();
    // One line box per key: squeezed by its value, a key wrapped a letter a line.
    const lines = await detail.locator('dt').evaluateAll((keys) =>
      keys.map((key) => {
        const range = key.ownerDocument.createRange();
        range.selectNodeContents(key);
        return `${key.textContent}: ${range.getClientRects().length}`;
      }),
    );
    expect(lines).toEqual(['before: 1', 'after: 1']);
    await page.close();
  });

  it('a page past the last (an old bookmark) says so and offers the last page, not an empty log', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/settings/audit?page_size=25');
    expect(body.total).toBeGreaterThan(0);
    expect(body.total_pages).toBeLessThan(50);
    await open(adminPage, '/audit?page=50', 'Audit log');
    const state = adminPage.locator('.audit-page .state.empty');
    await state.waitFor();
    expect(await state.textContent()).toContain(`Page 50 is past the last page (${body.total_pages}).`);
    await expectAccessible(adminPage, '/audit past the last page');
    await state.getByRole('button', { name: `Go to page ${body.total_pages}` }).click();
    await adminPage.waitForURL((u) => (u.searchParams.get('page') ?? '1') === String(body.total_pages)); // page 1, the default, leaves the URL
    await adminPage.locator('table.audit-table tbody tr').first().waitFor();
  });

  it('writes each entry’s time in UTC, to the second, under a "When (UTC)" header, in a browser in New York', async () => {
    const page = await pageInNewYork();
    await signIn(page, 'admin', PASSWORD, '/audit');
    await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
    expect(await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone')).toBe('America/New_York');
    const rows = page.locator('table.audit-table tbody tr');
    await rows.first().waitFor();
    // Each entry's time (its <time>'s datetime is the entry's `at` as the API sends it) reads UTC, to the second.
    const times = await rows.locator('td:first-child time').all();
    expect(times.length).toBeGreaterThan(0);
    for (const time of times) {
      const iso = new Date((await time.getAttribute('datetime')) ?? '').toISOString();
      expect(await time.textContent()).toBe(iso.slice(0, 19).replace('T', ' '));
    }
    expect(await page.locator('table.audit-table thead th').first().textContent()).toBe('When (UTC)');
  });

  it("writes a time in an entry's detail (an invitation's expires_at) as the log's times, not as raw ISO", async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/settings/audit?action=invite');
    const entry: { target: string; detail: { expires_at: string } } = body.entries[0];
    const expires = entry.detail.expires_at;
    expect(expires).toMatch(/^\d{4}-\d\d-\d\dT/);
    await open(adminPage, '/audit?action=invite', 'Audit log');
    const row = adminPage.locator('table.audit-table tbody tr').filter({ hasText: entry.target }).first();
    const value = row
      .locator('.audit-detail div')
      .filter({ has: adminPage.locator('dt', { hasText: 'expires_at' }) })
      .locator('dd');
    await expect.poll(() => value.textContent()).toBe(`${expires.slice(0, 19).replace('T', ' ')} UTC`);
    expect(await value.locator('time').getAttribute('datetime')).toBe(expires);
  });

  it('writes detail values as the pages do (counts, yes/no, lists, a setting as key: value; a fraction unrounded, an empty list as []) and a long user agent in two lines', async () => {
    const agent = `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) ${'Extension/1.0 '.repeat(20)}Safari/537.36`;
    const detail = {
      removed: 12345,
      ratio: 0.0001,
      none: [],
      applied: true,
      names: ['alpha', 'beta'],
      before: { health_scoring_method: 'ai', alert_criticality_method: 'rules' },
      nested: { a: { b: 1 } },
    };
    await writeAudit({
      actor: 'detail-writer',
      role: 'superadmin',
      action: 'settings_update',
      target: 'detail-shapes',
      detail,
      ip: '192.0.2.7',
      user_agent: agent,
    });
    await open(adminPage, '/audit?action=settings_update', 'Audit log');
    const row = adminPage.locator('table.audit-table tbody tr').filter({ hasText: 'detail-shapes' });
    await row.waitFor();
    const shown = await row
      .locator('.audit-detail div')
      .evaluateAll((pairs) => pairs.map((p) => `${p.querySelector('dt')?.textContent}=${p.querySelector('dd')?.textContent}`));
    // In the order stored (a DynamoDB map keeps none).
    expect(shown.sort()).toEqual(
      [
        'applied=yes',
        'names=alpha, beta',
        'before=health_scoring_method: ai, alert_criticality_method: rules',
        'nested={"a":{"b":1}}',
        'none=[]',
        'ratio=0.0001',
        'removed=12,345',
      ].sort(),
    );
    // The whole agent on hover; the cell as tall as two of its lines, not the seven it would wrap to.
    const cell = row.locator('.audit-agent');
    expect(await cell.getAttribute('title')).toBe(agent);
    const [height, line] = (await adminPage.evaluate(`(() => {
      const agent = [...document.querySelectorAll('.audit-agent')].find((el) => el.title.includes('Extension/1.0'));
      return [agent.getBoundingClientRect().height, parseFloat(getComputedStyle(agent).lineHeight)];
    })()`)) as [number, number];
    expect(height).toBeLessThanOrEqual(2 * line + 1);
    expect(await cell.evaluate((el) => el.scrollHeight > el.clientHeight)).toBe(true);
  });

  it('pages through the log with the page in the URL', async () => {
    const { body } = await api(service.url, admin, 'GET', '/api/settings/audit?page_size=25');
    await open(adminPage, '/audit', 'Audit log');
    await adminPage.locator('table.audit-table tbody tr').first().waitFor();
    if (body.total <= 25) {
      expect(await adminPage.getByRole('button', { name: 'Next' }).count()).toBe(0);
      return;
    }
    await adminPage.getByRole('button', { name: 'Next' }).click();
    await adminPage.waitForURL((u) => u.searchParams.get('page') === '2');
    await adminPage.getByText(/page 2 of/).waitFor();
  });

  it('pages on from the newest without showing an entry twice while entries are written: the listing is pinned to what it showed', async () => {
    // 30 withdrawals a minute back, then the page; 5 more are written while page 1 is read.
    const from = Date.now() - 60_000;
    for (let i = 0; i < 30; i++) await writeAudit({ actor: `paged-${i}`, role: 'admin', action: 'change_withdraw', target: 'paging' }, new Date(from + i * 10));
    const actors = () => adminPage.locator('table.audit-table tbody tr > td:nth-child(2)').allTextContents();
    const status = adminPage.locator('.audit-page p[role="status"]');
    await open(adminPage, '/audit?action=change_withdraw', 'Audit log');
    await expect.poll(() => status.textContent()).toContain('page 1 of 2');
    const first = await actors();
    expect(first).toEqual(Array.from({ length: 25 }, (_, i) => `paged-${29 - i} · admin`));
    for (let i = 0; i < 5; i++) await writeAudit({ actor: `arrived-${i}`, role: 'admin', action: 'change_withdraw', target: 'paging' });
    await adminPage.getByRole('button', { name: 'Next' }).click();
    await adminPage.waitForURL((u) => u.searchParams.get('page') === '2');
    // Each entry once: page 2 goes on where page 1 ended, none of the entries written since moved page 1's onto it.
    await expect.poll(actors).toEqual(['paged-4 · admin', 'paged-3 · admin', 'paged-2 · admin', 'paged-1 · admin', 'paged-0 · admin']);
    // Said as a listing up to the newest entry it showed, with the way back to the newest.
    const pinned = new URL(adminPage.url()).searchParams.get('before');
    expect(pinned).toBe(new Date(from + 29 * 10 + 1).toISOString());
    expect(await status.textContent()).toContain('30 entries of action change withdraw before');
    await adminPage.getByRole('button', { name: 'Previous' }).click();
    await expect.poll(actors).toEqual(first);
    await adminPage.getByRole('button', { name: 'Back to the newest' }).click();
    await adminPage.waitForURL((u) => !u.searchParams.has('before'));
    await expect.poll(async () => (await actors()).slice(0, 5)).toEqual(Array.from({ length: 5 }, (_, i) => `arrived-${4 - i} · admin`));
  });

  it('reaches entries past the newest 500: "Older entries", and "Before" any instant, kept in the URL', async () => {
    // 510 patrol triggers a year back, a second apart: the listing shows the newest 500, down to the 11th.
    const base = Date.parse('2025-12-01T00:00:00Z');
    await batchPut(
      'audit',
      Array.from({ length: 510 }, (_, i) => {
        const at = new Date(base + i * 1000).toISOString();
        const sk = `${at}#old-${i}`;
        return {
          pk: 'AUDIT',
          sk,
          gsi1pk: 'ACTION#patrol_trigger',
          gsi1sk: sk,
          id: `old-${i}`,
          at,
          actor: `trigger-${i}`,
          role: 'admin',
          action: 'patrol_trigger',
          target: null,
          detail: {},
          ip: null,
          user_agent: null,
        };
      }),
    );
    // `before` in the keys' own form: a UTC year of four digits (9999-12-31T23:59:59-01:00 is year 10000 in UTC).
    expect((await api(service.url, admin, 'GET', `/api/settings/audit?before=${encodeURIComponent('9999-12-31T23:59:59-01:00')}`)).status).toBe(422);
    expect((await api(service.url, admin, 'GET', `/api/settings/audit?before=${encodeURIComponent('9999-12-31T23:59:59+01:00')}`)).status).toBe(200);
    expect((await api(service.url, admin, 'GET', '/api/settings/audit?before=yesterday')).status).toBe(422);
    const actors = () => adminPage.locator('table.audit-table tbody tr > td:nth-child(2)').allTextContents();
    const status = adminPage.locator('.audit-page p[role="status"]');
    await open(adminPage, '/audit?action=patrol_trigger', 'Audit log');
    await expect.poll(() => status.textContent()).toContain('500 entries of action patrol trigger (the log lists the newest 500)');
    const older = adminPage.getByRole('button', { name: /^Older entries/ });
    expect(await older.textContent()).toBe('Older entries (before 2025-12-01 00:00:10 UTC)');
    await older.click();
    await adminPage.waitForURL((u) => u.searchParams.get('before') === '2025-12-01T00:00:10.000Z');
    await expect.poll(actors).toEqual(Array.from({ length: 10 }, (_, i) => `trigger-${9 - i} · admin`));
    expect(await status.textContent()).toContain('10 entries of action patrol trigger before 2025-12-01 00:00:10 UTC (the log lists the newest 500 before it)');
    expect(await adminPage.getByLabel('Before (UTC)').inputValue()).toBe('2025-12-01T00:00:10');
    expect(await older.count()).toBe(0);
    await expectAccessible(adminPage, '/audit older entries');

    await adminPage.reload();
    await expect.poll(actors).toHaveLength(10);
    await adminPage.getByLabel('Before (UTC)').fill('2025-12-01T00:00:03');
    await adminPage.waitForURL((u) => u.searchParams.get('before') === '2025-12-01T00:00:03Z');
    await expect.poll(actors).toEqual(['trigger-2 · admin', 'trigger-1 · admin', 'trigger-0 · admin']);

    await adminPage.getByRole('button', { name: 'Back to the newest' }).click();
    await adminPage.waitForURL((u) => !u.searchParams.has('before'));
    await expect.poll(() => status.textContent()).toContain('500 entries of action patrol trigger (the log lists the newest 500)');
    expect(await adminPage.getByLabel('Before (UTC)').inputValue()).toBe('');
  });

  it("links a target to its page (an issue, an AI issue, a proposal, a rule set, a patrol report), and puts a change's before and after last", async () => {
    const linked: [AuditAction, string, Record<string, unknown>, string][] = [
      ['issue_update', 'iss-audit-link', { before: { notes: '' }, after: { notes: 'seen' } }, '/issues/iss-audit-link'],
      ['issue_update', 'ai-audit-link', { before: { notes: '' }, after: { notes: 'seen' }, source: 'ai' }, '/ai-issues/ai-audit-link'],
      ['change_propose', 'chg-audit-link', { rule_set: 'risk-rules' }, '/proposals/chg-audit-link'],
      ['rules_update', 'risk-rules', { rule_set: 'risk-rules', version: 2 }, '/rules?set=risk'],
      ['patrol_trigger', 'rep-audit-link', { report_type: 'on_demand' }, '/patrol/rep-audit-link'],
    ];
    for (const [action, target, detail] of linked) await writeAudit({ actor: 'audit-links', role: 'admin', action, target, detail });
    for (const [action, target, , path] of linked) {
      await adminPage.goto(`/audit?action=${action}`);
      const row = adminPage.locator('table.audit-table tbody tr', { hasText: target }).first();
      expect(await row.getByRole('link', { name: target, exact: true }).getAttribute('href'), target).toBe(path);
    }
    // An account's target has no page: it stays text.
    await adminPage.goto('/audit?action=invite');
    const invited = adminPage.locator('table.audit-table tbody tr').first().locator('td:nth-child(4)');
    await expect.poll(() => invited.textContent()).toContain('@');
    expect(await invited.locator('a').count()).toBe(0);
    // Whatever order the entry's detail comes in (a DynamoDB map keeps none), the AI issue's source is not between its before and after.
    await adminPage.goto('/audit?action=issue_update');
    const keys = adminPage.locator('table.audit-table tbody tr', { hasText: 'ai-audit-link' }).locator('.audit-detail dt');
    await expect.poll(() => keys.allTextContents()).toEqual(['source', 'before', 'after']);
  });
});

describe('LLM cost', { timeout: 60_000 }, () => {
  it('renders totals, charts, the by-model and pricing tables for a superadmin', async () => {
    for (const [source, model, daysAgo, cost] of [
      // a paid call too cheap for four decimals: not to be shown as the "$0" of an unpriced model
      ['chat', 'gpt-4o-mini', 0, 0.000027],
      ['agent', 'gpt-4o-mini', 1, 0],
      ['agent', 'console-test-model', 2, 0],
    ] as const) {
      await recordUsage(
        {
          run_id: `run-${source}-${daysAgo}`,
          source,
          model,
          input_tokens: 12_000,
          output_tokens: 3_000,
          total_tokens: 15_000,
          cost_usd: cost,
          duration_ms: 1_500,
          error: false,
          user: 'admin',
        },
        new Date(Date.now() - daysAgo * 86_400_000),
      );
    }
    const summary = await api(service.url, admin, 'GET', '/api/llm-usage/summary?days=30');
    expect(summary.body.totals.runs).toBeGreaterThanOrEqual(3);
    await open(adminPage, '/llm-cost', 'LLM cost');
    await adminPage.getByText('Monthly projection').waitFor();
    // The periods are UTC calendar days, where the issue lists' windows are rolling: said where they are chosen.
    await adminPage.getByText("A period is whole UTC days, today's so far included", { exact: false }).waitFor();
    await adminPage.getByText('Daily cost by source', { exact: true }).waitFor();
    await adminPage.getByText('Daily tokens by source', { exact: true }).waitFor();
    await adminPage.locator('.line-chart-plot canvas').first().waitFor();
    // Each day's figures, for whoever asks what it cost on a day: behind "Values", one row a day of the period.
    const cost = adminPage.locator('figure.line-chart', { hasText: 'Daily cost by source' });
    // Named by its chart for whoever lists the page's controls (a cluster page has 13 of them).
    await cost.getByText('Values of Daily cost by source', { exact: true }).click();
    await expect.poll(() => cost.locator('table.line-chart-table tbody tr').count()).toBe(30);
    expect(await cost.locator('table.line-chart-table tbody tr').first().isVisible()).toBe(true);
    expect(await cost.locator('table.line-chart-table tbody tr').last().locator('td').allTextContents()).toContain('< $0.0001');
    await adminPage.getByRole('region', { name: 'Usage by model' }).getByRole('rowheader', { name: 'console-test-model' }).waitFor();
    const prices = await api(service.url, admin, 'GET', '/api/llm-usage/pricing');
    const pricing = adminPage.getByRole('region', { name: 'Model prices' });
    if (prices.body.pricing.length) await pricing.getByRole('rowheader', { name: prices.body.pricing[0].model, exact: true }).waitFor();
    expect(await adminPage.getByText(/console-test-model: their calls count as \$0|No price is set for .*console-test-model/).count()).toBe(1);

    await adminPage.getByLabel('Charts split by').selectOption('model');
    await adminPage.waitForURL((u) => u.searchParams.get('split') === 'model');
    await adminPage.getByText('Daily cost by model', { exact: true }).waitFor();
    await expectAccessible(adminPage, '/llm-cost');
  });

  it('shows what the agents spent today against their daily budget, and says when it is reached', async () => {
    await recordUsage({
      run_id: 'agent-today',
      source: 'agent',
      model: 'gpt-4o-mini',
      input_tokens: 1000,
      output_tokens: 10,
      total_tokens: 1010,
      cost_usd: 0.3,
      duration_ms: 5,
      error: false,
      user: 'agent-worker',
    });
    const tile = adminPage.locator('.llm-tiles .tile', { hasText: 'Agents today (UTC)' });
    try {
      for (const budget of ['50', '0.25', '0']) {
        process.env.AGENT_DAILY_BUDGET_USD = budget;
        const { agent_budget: answer } = (await api(service.url, admin, 'GET', '/api/llm-usage/summary?days=30')).body;
        expect(answer.daily_usd).toBe(Number(budget));
        expect(answer.spent_today_usd).toBeGreaterThanOrEqual(0.3);
        await open(adminPage, '/llm-cost', 'LLM cost');
        await tile.waitFor();
        const spent = `$${answer.spent_today_usd.toFixed(2)}`;
        const label =
          budget === '50'
            ? 'Agents today (UTC), of a $50.00 daily budget'
            : budget === '0.25'
              ? 'Agents today (UTC): the $0.25 daily budget is reached, so the patrol, investigations and AI grouping run their rules until 00:00 UTC'
              : 'Agents today (UTC): no daily budget is set';
        await expect.poll(() => tile.textContent()).toBe(`${spent}${label}`);
        expect(await tile.evaluate((el) => el.classList.contains('tone-warning'))).toBe(budget === '0.25');
      }
      await expectAccessible(adminPage, '/llm-cost with the agents budget');
    } finally {
      delete process.env.AGENT_DAILY_BUDGET_USD;
    }
  });

  it('labels the chart days in UTC, as the rest of the console, in a browser in New York', async () => {
    await recordUsage(
      {
        run_id: 'run-utc-axis',
        source: 'chat',
        model: 'gpt-4o-mini',
        input_tokens: 1_000,
        output_tokens: 500,
        total_tokens: 1_500,
        cost_usd: 0,
        duration_ms: 800,
        error: false,
        user: 'admin',
      },
      new Date(),
    );
    const page = await browser.page();
    // The page's zone (what Playwright's timezoneId sets), and every text the charts' canvases draw.
    await (await page.context().newCDPSession(page)).send('Emulation.setTimezoneOverride', { timezoneId: 'America/New_York' });
    await page.addInitScript(
      'const fill = CanvasRenderingContext2D.prototype.fillText; window.drawn = []; CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) { window.drawn.push(String(text)); return fill.call(this, text, ...rest); };',
    );
    await signIn(page, 'admin', PASSWORD, '/llm-cost?days=7');
    await page.getByRole('heading', { level: 1, name: 'LLM cost' }).waitFor();
    expect(await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone')).toBe('America/New_York');
    // The chart's table of values (its caption names it), not uPlot's legend table, which a chart of several series has.
    const table = page.locator('figure.line-chart table:has(caption)').first();
    await table.locator('tbody tr').first().waitFor({ state: 'attached' });
    // The period's seven UTC days, as the chart's table lists them.
    const days = await table.locator('tbody th').allTextContents();
    expect(days).toHaveLength(7);
    await page.locator('.line-chart-plot canvas').first().waitFor();
    // A tick at each day's UTC midnight, where its point is, labelled with that day (month and day, however written):
    // in the browser's zone the ticks fall on New York's midnights and the last day goes unlabelled.
    const dayLabel = /^(\d{1,2})[-/](\d{1,2})$/;
    const labelled = async () => {
      const drawn = (await page.evaluate('window.drawn')) as string[];
      const named = drawn.flatMap((t) => {
        const m = dayLabel.exec(t);
        return m ? [`${m[1]?.padStart(2, '0')}-${m[2]?.padStart(2, '0')}`] : [];
      });
      return [...new Set(named)].sort();
    };
    await expect.poll(labelled).toEqual(days.map((d) => d.slice(5)));
    expect(await table.locator('thead th').first().textContent()).toBe('Time (UTC)');
  });

  it("writes its counts as it writes its dollars, whatever the browser's language (not 12.000 tokens beside $0.0127)", async () => {
    const page = await browser.page();
    await (await page.context().newCDPSession(page)).send('Emulation.setLocaleOverride', { locale: 'de-DE' });
    await signIn(page, 'admin', PASSWORD, '/llm-cost');
    await page.getByRole('heading', { level: 1, name: 'LLM cost' }).waitFor();
    expect(await page.evaluate('new Intl.NumberFormat().format(12000.5)')).toBe('12.000,5');
    const { body } = await api(service.url, admin, 'GET', '/api/llm-usage/by-model?days=30');
    const m = body.by_model.find((r: { model: string }) => r.model === 'gpt-4o-mini');
    const row = page
      .getByRole('region', { name: 'Usage by model' })
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: 'gpt-4o-mini', exact: true }) });
    await row.waitFor();
    const cells = await row.locator('td').allTextContents();
    expect(cells.slice(0, 4)).toEqual([m.runs, m.input_tokens, m.output_tokens, m.total_tokens].map((n: number) => n.toLocaleString('en')));
    expect(cells[5]).toMatch(/^\d+(\.\d+)? s$/);
    const tokens = page
      .locator('.tile')
      .filter({ hasText: /Tokens \(/ })
      .locator('.value');
    // Compact as every figure short of room (format.ts compact): "47.5K" (never "47,5 Tsd."), "9,999" below 10,000.
    expect(await tokens.textContent()).toMatch(/^(\d{1,3}(,\d{3})*|\d+(\.\d)?[KMBT])$/);
  });

  it("is the last of a superadmin's links, on the line of the first at 1280 px (it went to a line of its own)", async () => {
    const size = adminPage.viewportSize();
    await adminPage.setViewportSize({ width: 1280, height: 800 });
    try {
      await open(adminPage, '/', 'Fleet').catch(() => adminPage.getByRole('navigation', { name: 'Main' }).waitFor());
      const links = adminPage.getByRole('navigation', { name: 'Main' }).getByRole('link');
      expect(await links.count()).toBe(18);
      const [first, last] = [await links.first().boundingBox(), await links.last().boundingBox()];
      expect(await links.last().textContent()).toBe('LLM cost');
      expect(last!.y).toBe(first!.y);
    } finally {
      if (size) await adminPage.setViewportSize(size);
    }
  });

  it('is neither listed nor shown for a viewer', async () => {
    await open(viewerPage, '/', 'Fleet').catch(() => viewerPage.getByRole('navigation', { name: 'Main' }).waitFor());
    const nav = viewerPage.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Dashboards' }).waitFor();
    expect(await nav.getByRole('link', { name: 'LLM cost' }).count()).toBe(0);
    await open(viewerPage, '/llm-cost', 'Not available');
    expect(await viewerPage.getByText('Monthly projection').count()).toBe(0);
    await expectAccessible(viewerPage, '/llm-cost as a viewer');
  });
});

describe('dashboards', { timeout: 90_000 }, () => {
  /** The service set up for the fake BI server (the local service reads the environment per request), its logins forgotten. */
  const useEmbed = (extra: Record<string, string> = {}) => {
    Object.assign(process.env, {
      EMBED_HOST: fake.host,
      EMBED_CLIENT_ID: EMBED.clientId,
      EMBED_CLIENT_SECRET: EMBED.clientSecret,
      EMBED_TIMEOUT_MS: '2000',
      ...extra,
    });
    forgetEmbedLogins();
  };

  it('says which settings to set when the service answers 503', async () => {
    await open(viewerPage, '/dashboards', 'Dashboards');
    const notice = viewerPage.locator('.dashboards-unconfigured');
    await notice.getByText('Dashboard embedding is not configured: set EMBED_HOST', { exact: false }).waitFor();
    expect(await notice.textContent()).toContain('Dashboard embedding is not set up');
    expect(await notice.textContent()).toContain('EMBED_CLIENT_ID');
    // A setting nobody made yet, not a failure: a neutral notice (the empty state's look), not announced as an error.
    expect(await notice.getAttribute('class')).toContain('state empty');
    expect(await notice.getAttribute('class')).not.toContain('problem');
    expect(await notice.getAttribute('role')).toBeNull();
    expect(await viewerPage.getByRole('alert').count()).toBe(0);
    // Asked again, the service would answer the same 503: no "Try again", the text says to reload once set.
    expect(await notice.getByRole('button').count()).toBe(0);
    await expectAccessible(viewerPage, '/dashboards not configured');

    // A passing 503 (with Retry-After) is a failure of the moment: still the problem, announced, with when to try again.
    await viewerPage.route('**/api/dashboard-embed/dashboard', (route) =>
      route.fulfill({
        status: 503,
        headers: { 'content-type': 'application/problem+json', 'retry-after': '7' },
        body: JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'The BI secret could not be read just now.' }),
      }),
    );
    try {
      await viewerPage.reload();
      const alert = viewerPage.getByRole('alert');
      await alert.getByText('The BI secret could not be read just now.').waitFor();
      expect(await alert.getAttribute('class')).toContain('state problem');
      expect(await alert.textContent()).toContain('another try in 7 s');
      expect(await viewerPage.locator('.dashboards-unconfigured').count()).toBe(0);
    } finally {
      await viewerPage.unroute('**/api/dashboard-embed/dashboard');
    }

    // Set up meanwhile, a reload loads the settings and opens one session for the dashboard they name, not two.
    useEmbed({ EMBED_DASHBOARD: '/embed/dashboards/7' });
    const acquires = countRequests(viewerPage, '/api/dashboard-embed/acquire-session');
    try {
      await viewerPage.reload();
      await viewerPage.locator('iframe.dashboards-frame').waitFor();
      // A later acquire of our own: a second one sent by the reload would have gone before it.
      const reloaded = viewerPage.waitForResponse((r) => new URL(r.url()).pathname === '/api/dashboard-embed/acquire-session');
      await viewerPage.getByRole('button', { name: 'Reload the dashboard' }).click();
      expect((await reloaded).status()).toBe(200);
      expect(acquires.count()).toBe(2);
    } finally {
      acquires.stop();
      delete process.env.EMBED_DASHBOARD;
    }
  });

  it('names EMBED_DASHBOARD when the service has no dashboard, and shows an address typed in', async () => {
    useEmbed();
    const acquires = countRequests(viewerPage, '/api/dashboard-embed/acquire-session');
    try {
      await open(viewerPage, '/dashboards', 'Dashboards');
      await viewerPage.getByText('the service names no dashboard').waitFor();
      expect(await viewerPage.locator('.dashboards-none').textContent()).toContain('EMBED_DASHBOARD');
      await expectAccessible(viewerPage, '/dashboards without a dashboard configured');
      await viewerPage.getByLabel('Dashboard address').fill('/embed/dashboards/3');
      await viewerPage.getByRole('button', { name: 'Show' }).click();
      await viewerPage.waitForURL((u) => u.searchParams.get('dashboard') === '/embed/dashboards/3');
      await viewerPage.locator('iframe.dashboards-frame').waitFor();
      // One session, for the dashboard shown: none was opened while there was nothing to show.
      expect(acquires.count()).toBe(1);
    } finally {
      acquires.stop();
    }
    const src = new URL((await viewerPage.locator('iframe.dashboards-frame').getAttribute('src'))!);
    expect(src.origin).toBe(fake.host);
    expect(decodeURIComponent(src.pathname)).toMatch(/^\/login\/embed\/\/embed\/dashboards\/3\?/);
    await viewerPage.evaluate('localStorage.clear()');
  });

  it('refuses a dashboard address on another origin: no frame is loaded there, so no token goes to it', async () => {
    const elsewhere = 'https://elsewhere.example/embed/dashboards/1';
    // The BI server's address as a prefix, but the host after the @ is elsewhere.example.
    for (const address of [elsewhere, '//elsewhere.example/embed/dashboards/1', `${fake.host}@elsewhere.example/embed/dashboards/1`]) {
      await open(viewerPage, `/dashboards?dashboard=${encodeURIComponent(address)}`, 'Dashboards');
      await viewerPage.getByText(`“${address}” is not a dashboard address on the BI server (${fake.host}`).waitFor();
      expect(await viewerPage.locator('iframe').count()).toBe(0);
    }
    await viewerPage.getByLabel('Dashboard address').fill(elsewhere);
    await viewerPage.getByRole('button', { name: 'Show' }).click();
    await viewerPage.getByText(`Enter the address of a dashboard on the BI server (${fake.host}/…`).waitFor();
    expect(await viewerPage.locator('iframe').count()).toBe(0);
    // The same origin written out in full is taken.
    await viewerPage.getByLabel('Dashboard address').fill(`${fake.host}/embed/dashboards/4`);
    await viewerPage.getByRole('button', { name: 'Show' }).click();
    const src = new URL((await viewerPage.locator('iframe.dashboards-frame').getAttribute('src'))!);
    expect(src.origin).toBe(fake.host);
    await viewerPage.evaluate('localStorage.clear()');
  });

  it('embeds the configured dashboard without an address typed in, renews its tokens and acquires a new session when it ends', async () => {
    useEmbed({ EMBED_DASHBOARD: '/embed/dashboards/7' });
    const page = await pageInNewYork(); // its times read UTC all the same
    await page.clock.install();
    await signIn(page, VIEWER.email, VIEWER.password, '/dashboards');
    await page.getByRole('heading', { level: 1, name: 'Dashboards' }).waitFor();
    const frame = page.locator('iframe.dashboards-frame');
    await frame.waitFor();
    const src = new URL((await frame.getAttribute('src'))!);
    expect(src.origin).toBe(fake.host);
    expect(src.pathname.startsWith('/login/embed/')).toBe(true);
    const target = new URL(decodeURIComponent(src.pathname.slice('/login/embed/'.length)), fake.host);
    expect(target.pathname).toBe('/embed/dashboards/7');
    expect(target.searchParams.get('embed_domain')).toBe(service.url);
    const issued = fake.issuedTokens();
    expect(issued).toContain(target.searchParams.get('embed_navigation_token'));
    expect(issued).toContain(src.searchParams.get('embed_authentication_token'));
    expect(await frame.getAttribute('title')).toBe('BI dashboard');
    // The page's CSP lets the BI server's page load in the frame (the header narrows the built
    // index.html's frame-src to EMBED_HOST's origin) and refuses a frame on any other origin.
    await expect.poll(() => page.frames().some((f) => f.url().startsWith(`${fake.host}/login/embed/`))).toBe(true);
    // (A string: this project's tests are typed without the DOM library.)
    const refused = await page.evaluate(`new Promise((resolve) => {
      document.addEventListener('securitypolicyviolation', (e) => resolve(e.effectiveDirective + ' ' + e.blockedURI), { once: true });
      const elsewhere = document.createElement('iframe');
      elsewhere.src = 'https://elsewhere.example/embed/dashboards/1';
      document.body.append(elsewhere);
    })`);
    expect(refused).toBe('frame-src https://elsewhere.example'); // a cross-origin blockedURI is its origin
    await page.evaluate(`document.querySelector('iframe[src^="https://elsewhere.example"]').remove()`);
    expect(new URL(page.url()).searchParams.has('dashboard')).toBe(false);
    expect(await page.getByLabel('Dashboard address').isVisible()).toBe(false); // another one is a secondary choice
    await expectAccessible(page, '/dashboards with the configured dashboard');

    // A minute before the 600 s tokens expire the page renews them, without reloading the frame.
    const renewed = page.waitForResponse((r) => r.url().endsWith('/api/dashboard-embed/generate-tokens'));
    await page.clock.runFor(545_000);
    expect((await renewed).status()).toBe(200);
    await page.getByText(/last renewed/).waitFor();
    expect(await frame.getAttribute('src')).toBe(src.href);
    // The session's times in UTC, labelled, though the browser is in New York: the renewal a few seconds ago, by the page's clock.
    const session = (await page.locator('.dashboards-session').textContent()) ?? '';
    expect(session).toMatch(
      /^Embed session until \d{4}-\d\d-\d\d \d\d:\d\d UTC · tokens renew automatically \(next before \d\d:\d\d UTC\), last renewed \d\d:\d\d UTC\./,
    );
    const clock = Number(await page.evaluate('Date.now()'));
    expect([clock - 60_000, clock].map((t) => new Date(t).toISOString().slice(11, 16))).toContain(/last renewed (\d\d:\d\d) UTC/.exec(session)?.[1]);
    for (const time of await page.locator('.dashboards-session time').all()) {
      const iso = new Date((await time.getAttribute('datetime')) ?? '').toISOString();
      expect([`${iso.slice(0, 16).replace('T', ' ')} UTC`, `${iso.slice(11, 16)} UTC`]).toContain(await time.textContent());
    }

    // The BI session ends: the next renewal answers session_reference_token_ttl 0, and the page acquires a new session.
    fake.advance(2_592_000);
    const expired = page.waitForResponse((r) => r.url().endsWith('/api/dashboard-embed/generate-tokens'));
    const reacquired = page.waitForResponse((r) => r.url().endsWith('/api/dashboard-embed/acquire-session'));
    await page.clock.runFor(545_000);
    expect(await (await expired).json()).toEqual({ session_reference_token_ttl: 0 });
    expect((await reacquired).status()).toBe(200);
    await expect.poll(() => frame.getAttribute('src')).not.toBe(src.href);
    const again = new URL((await frame.getAttribute('src'))!);
    expect(again.searchParams.get('embed_authentication_token')).not.toBe(src.searchParams.get('embed_authentication_token'));
    expect(fake.issuedTokens()).toContain(again.searchParams.get('embed_authentication_token'));
  });
});

describe('metric sources', { timeout: 90_000 }, () => {
  it('shows the disabled shipped default and a row per metric, and starts a pull from the console', async () => {
    const shipped = (await shippedValue('metric-sources')) as { metrics: { metric_key: string; query: string }[] };
    const keys = shipped.metrics.map((m) => m.metric_key).sort();
    const status = await api(service.url, admin, 'GET', '/api/metric-sources/status');
    expect(status.status).toBe(200);
    expect(status.body.enabled).toBe(false);
    expect(status.body.metrics.map((m: { metric_key: string }) => m.metric_key).sort()).toEqual(keys);

    await open(adminPage, '/', 'Fleet').catch(() => adminPage.getByRole('navigation', { name: 'Main' }).waitFor());
    await adminPage.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Metric sources' }).click();
    await adminPage.getByRole('heading', { level: 1, name: 'Metric sources' }).waitFor();
    expect(new URL(adminPage.url()).pathname).toBe('/metric-sources');

    const source = adminPage.getByRole('region', { name: /^Source/ });
    await source.getByText('Pulling is disabled.').waitFor();
    expect(await source.getByRole('heading', { level: 2 }).textContent()).toContain('disabled');
    const editor = source.getByRole('link', { name: /enable it in the rules editor/ });
    expect(await editor.getAttribute('href')).toBe('/rules?set=metric-sources');
    expect(await source.getByText(status.body.source.url, { exact: true }).count()).toBe(1);

    // One row per metric of the rule set, in metric-key order (the default sort), each with its lag stated in words.
    const table = adminPage.getByRole('region', { name: 'Pull status per metric' });
    await expect.poll(() => table.locator('tbody tr[data-index] td:first-child').allTextContents()).toEqual(keys);
    expect(await table.getByRole('columnheader', { name: 'Metric' }).getAttribute('aria-sort')).toBe('ascending');
    await table.getByRole('button', { name: /^Metric/ }).click();
    await adminPage.waitForURL((u) => u.searchParams.get('sort') === '-metric_key');
    await expect.poll(() => table.locator('tbody tr[data-index] td:first-child').allTextContents()).toEqual([...keys].reverse());
    // The queries, past the right edge at 1280 px, are one line each with the whole query as a tooltip: every row as tall
    // as its status (before, a wrapped query made some rows three times as tall, blank where the status is read).
    const rowHeights = await table.locator('tbody tr[data-index]').evaluateAll((rows) => rows.map((r) => Math.round(r.getBoundingClientRect().height)));
    expect(new Set(rowHeights).size, `row heights ${rowHeights.join(', ')}`).toBe(1);
    const longest = [...shipped.metrics].sort((a, b) => b.query.length - a.query.length)[0]!;
    expect(await table.locator('code.ms-query', { hasText: longest.query }).getAttribute('title')).toBe(longest.query);
    await expectAccessible(adminPage, '/metric-sources, disabled');

    const answered = adminPage.waitForResponse((r) => r.url().endsWith('/api/metric-sources/pull') && r.request().method() === 'POST');
    await adminPage.getByRole('button', { name: 'Pull now' }).click();
    const response = await answered;
    expect(response.status()).toBe(202);
    const started = (await response.json()) as { status: string; message: string; requested_at: string };
    expect(started.status).toBe('started');
    // The run it started began at or after it was asked for, by the service's clock (what the page follows).
    await expect
      .poll(async () => (await api(service.url, admin, 'GET', '/api/metric-sources/status')).body.last_run?.started_at >= started.requested_at)
      .toBe(true);
    const said = adminPage.getByRole('status').filter({ hasText: 'Pull started.' });
    await said.getByText(started.message, { exact: false }).waitFor();
    // The page follows the pull to its end: with the source disabled it reads nothing, and its run says so.
    await said.getByText(/^Finished: disabled, 0 accepted, 0 refused in /).waitFor();
    await adminPage.getByRole('region', { name: 'Last run' }).getByText('disabled', { exact: true }).waitFor();
    expect((await api(service.url, admin, 'GET', '/api/metric-sources/status')).body.last_run).toMatchObject({ outcome: 'disabled', accepted: 0 });
    await expectAccessible(adminPage, '/metric-sources after Pull now');

    // While a run holds the puller's lock (the schedule's), Pull now starts nothing and says so: "started" promised a
    // run that, finding the lock held, recorded nothing.
    const lastRun = (await api(service.url, admin, 'GET', '/api/metric-sources/status')).body.last_run;
    await acquireLock(PULL_LOCK, 'a-scheduled-run', 60_000);
    try {
      const again = adminPage.waitForResponse((r) => r.url().endsWith('/api/metric-sources/pull') && r.request().method() === 'POST');
      await adminPage.getByRole('button', { name: 'Pull now' }).click();
      const running = await again;
      expect(running.status()).toBe(200);
      expect(await running.json()).toMatchObject({ status: 'already_running' });
      await adminPage.getByRole('status').filter({ hasText: 'A pull is already running.' }).waitFor();
      expect((await api(service.url, admin, 'GET', '/api/metric-sources/status')).body.last_run).toEqual(lastRun);
    } finally {
      await releaseLock(PULL_LOCK, 'a-scheduled-run');
    }
  });

  it('shows a partial pull: the outcome, refusals with their reason, the error of each failing metric and the errors newest first', async () => {
    // A Prometheus that answers the qps query with a series of a cluster the fleet does not know (and an info), and refuses every other query.
    const NOT_A_COUNTER = 'PromQL info: metric might not be a counter, name does not end in _total/_sum/_count/_bucket: "qps"';
    const shipped = (await shippedValue('metric-sources')) as { metrics: { metric_key: string; query: string }[] };
    const qps = shipped.metrics.find((m) => m.metric_key === 'qps')!.query;
    const prometheus = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        res.setHeader('content-type', 'application/json');
        if (req.url !== '/api/v1/query_range' || form.get('query') !== qps) {
          res.statusCode = 400;
          res.end(JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error: unknown metric in this test Prometheus' }));
          return;
        }
        const at = Number(form.get('start'));
        res.end(
          JSON.stringify({
            status: 'success',
            data: { resultType: 'matrix', result: [{ metric: { cluster_id: 'ghost-cluster' }, values: [[at, '42']] }] },
            // What Prometheus 2.46+ says of a rate over a gauge (Debian's 2.42 says nothing of any query).
            infos: [NOT_A_COUNTER],
          }),
        );
      });
    });
    await new Promise<void>((resolve) => prometheus.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(prometheus.address() as AddressInfo).port}`;
    const live = await api(service.url, admin, 'GET', '/api/settings/metric-sources');
    const enabled = live.body.content
      .replace(/^(\s+)enabled: false(.*)$/m, '$1enabled: true$2')
      .replace(/^(\s+)url: \S+/m, `$1url: ${url}`)
      .replace(/^(\s+)backfill_days: \d+/m, '$1backfill_days: 1');
    expect((await api(service.url, admin, 'PUT', '/api/settings/metric-sources', { content: enabled, base_version: live.body.version })).body.applied).toBe(
      true,
    );
    try {
      await open(adminPage, '/metric-sources', 'Metric sources');
      const source = adminPage.getByRole('region', { name: /^Source/ });
      await source.getByText(url, { exact: true }).waitFor();
      expect(await source.getByRole('heading', { level: 2 }).textContent()).toContain('enabled');
      expect(await source.getByText('Pulling is disabled.').count()).toBe(0);

      await adminPage.getByRole('button', { name: 'Pull now' }).click();
      const said = adminPage.getByRole('status').filter({ hasText: 'Pull started.' });
      await said.getByText(/^Finished: partial, 0 accepted, [1-9]\d* refused in /).waitFor();
      await adminPage.getByRole('region', { name: 'Last run' }).getByText('partial', { exact: true }).waitFor();
      const status = (await api(service.url, admin, 'GET', '/api/metric-sources/status')).body;
      expect(status.last_run).toMatchObject({ outcome: 'partial', accepted: 0 });
      expect(await said.textContent()).toContain(`0 accepted, ${status.last_run.refused} refused`);

      const table = adminPage.getByRole('region', { name: 'Pull status per metric' });
      const qpsRow = table.locator('tbody tr[data-index]').filter({ has: adminPage.getByText('qps', { exact: true }) });
      await qpsRow.getByText(`mostly: ${status.metrics.find((m: { metric_key: string }) => m.metric_key === 'qps').refusal_last}`).waitFor();
      // What Prometheus said of the query, under it; no other metric's answer said anything.
      expect(status.metrics.find((m: { metric_key: string }) => m.metric_key === 'qps').warning_last).toBe(NOT_A_COUNTER);
      await qpsRow.getByText(`Prometheus: ${NOT_A_COUNTER}`, { exact: true }).waitFor();
      expect(await table.getByText(/^Prometheus: /).count()).toBe(1);
      const diskRow = table.locator('tbody tr[data-index]').filter({ has: adminPage.getByText('disk_used_pct', { exact: true }) });
      await diskRow.getByText('parse error: unknown metric in this test Prometheus', { exact: false }).waitFor();
      expect(await diskRow.getByText('Error:').count()).toBe(1);

      const errors = adminPage.getByRole('list', { name: 'Latest errors, newest first' });
      await expect.poll(() => errors.getByRole('listitem').count()).toBe(status.errors.length);
      expect(status.errors.length).toBe(shipped.metrics.length - 1);
      const times = await errors.locator('li time').evaluateAll((els) => els.map((e) => e.getAttribute('datetime') ?? ''));
      expect(times).toEqual([...times].sort().reverse());
      await expectAccessible(adminPage, '/metric-sources after a partial pull');
    } finally {
      const now = await api(service.url, admin, 'GET', '/api/settings/metric-sources');
      await api(service.url, admin, 'PUT', '/api/settings/metric-sources', { content: live.body.content, base_version: now.body.version });
      await new Promise((resolve) => prometheus.close(resolve));
    }
  });

  it('is neither listed nor shown for a viewer', async () => {
    await open(viewerPage, '/', 'Fleet').catch(() => viewerPage.getByRole('navigation', { name: 'Main' }).waitFor());
    const nav = viewerPage.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Rules' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Metric sources' }).count()).toBe(0);
    await open(viewerPage, '/metric-sources', 'Not available');
    expect(await viewerPage.getByRole('button', { name: 'Pull now' }).count()).toBe(0);
    const { status } = await api(service.url, await apiLogin(service.url, VIEWER.email, VIEWER.password), 'GET', '/api/metric-sources/status');
    expect(status).toBe(403);
  });
});

describe('dark theme on a phone', { timeout: 90_000 }, () => {
  it('each page passes axe in the dark theme at phone width, without sideways scrolling', async () => {
    const page = await browser.page();
    await page.setViewportSize({ width: 390, height: 844 });
    await signIn(page, 'admin', PASSWORD);
    await page.evaluate("localStorage.setItem('fleet-health.theme', 'dark')");
    for (const [path, heading, ready] of [
      ['/users', 'People', 'table.users-table tbody tr'],
      ['/audit', 'Audit log', 'table.audit-table tbody tr'],
      ['/llm-cost', 'LLM cost', '.line-chart-plot canvas'],
      ['/dashboards', 'Dashboards', '.dashboards-session, .dashboards-unconfigured'],
      ['/metric-sources', 'Metric sources', '.ms-source'],
    ] as const) {
      await open(page, path, heading);
      await page.locator(ready).first().waitFor();
      expect(await page.evaluate("document.documentElement.getAttribute('data-theme')")).toBe('dark');
      expect(await page.evaluate('document.documentElement.scrollWidth'), `${path} width`).toBeLessThanOrEqual(390);
      await expectAccessible(page, `${path} dark, phone`);
    }
  });
});
