// What the console calls the alert counts of a window (Debian Chromium, the whole local service, a small
// demo fleet): `firing_alert_count_7d` and a critical cluster's `alert_total` count the alerts that fired
// in the window, resolved ones included, so the pages say "fired", never "firing" (which reads as still
// firing: a cluster with one alert firing and two resolved showed "3 firing in 7 days").
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalService } from '../../infra/local/service.js';
import { api, apiLogin, launchBrowser, signIn, type TestBrowser } from '../support/browser.js';
import { startTestService } from '../support/local-service.js';

const PASSWORD = 'console-alert-counts-password';
let service: LocalService;
let browser: TestBrowser;
let admin: string;
let page: Page;

beforeAll(async () => {
  service = await startTestService({ adminPassword: PASSWORD, demoClusters: 4 });
  [browser, admin] = await Promise.all([launchBrowser(service.url), apiLogin(service.url, 'admin', PASSWORD)]);
  page = await browser.page();
  await signIn(page, 'admin', PASSWORD);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

describe('alert counts of a window', () => {
  it('a cluster page says how many alerts fired in the 7 days, one still firing and two resolved among them', async () => {
    const cluster = (await api(service.url, admin, 'GET', '/api/fleet/scores')).body.scores[0];
    const now = Date.now();
    const alert = (name: string, startedHoursAgo: number, resolved: boolean) => ({
      status: resolved ? 'resolved' : 'firing',
      labels: { alertname: name, cluster_id: cluster.cluster_id, severity: 'warning' },
      annotations: {},
      startsAt: new Date(now - startedHoursAgo * 3_600_000).toISOString(),
      endsAt: resolved ? new Date(now - (startedHoursAgo - 1) * 3_600_000).toISOString() : '0001-01-01T00:00:00Z',
      fingerprint: `${cluster.cluster_id}-${name}`,
    });
    const sent = [alert('CountedStillFiring', 1, false), alert('CountedResolvedOne', 30, true), alert('CountedResolvedTwo', 60, true)];
    expect((await api(service.url, service.ingestToken, 'POST', '/api/ingest/alerts', { version: '4', alerts: sent })).body).toMatchObject({ accepted: 3 });
    expect((await api(service.url, admin, 'POST', '/api/fleet/refresh')).status).toBe(200);
    const score = (await api(service.url, admin, 'GET', '/api/fleet/scores')).body.scores.find(
      (c: { cluster_id: string }) => c.cluster_id === cluster.cluster_id,
    );
    expect(score.firing_alert_count_7d).toBeGreaterThanOrEqual(3);

    await page.goto(`/clusters/${cluster.cluster_id}`);
    const line = page.locator('.cluster-subscores li', { hasText: 'Alerts' });
    await expect.poll(() => line.textContent()).toContain(`(${score.firing_alert_count_7d} fired in the last 7 days)`);
    expect(await line.textContent()).not.toContain('firing');
  });

  it("the critical clusters page says how many of a cluster's alerts fired in the 14 days", async () => {
    const critical = (await api(service.url, admin, 'GET', '/api/critical-clusters')).body.clusters.find((c: { alerts: unknown[] }) => c.alerts.length > 0);
    expect(critical).toBeDefined();
    await page.goto('/critical');
    const kinds = `${critical.alerts.length} kind${critical.alerts.length === 1 ? '' : 's'}`;
    const summary = page.locator('details.critical-alerts summary', { hasText: `Alerts (${kinds}, ${critical.alert_total} fired in the last 14 days)` });
    await summary.first().waitFor();
    expect(await page.locator('details.critical-alerts summary', { hasText: 'firing' }).count()).toBe(0);
    // The card's line beside the unified score counts the same alerts, in the same words.
    const line = page.locator('.critical-health', {
      hasText: `${critical.alert_total} alert${critical.alert_total === 1 ? '' : 's'} fired in the last 14 days`,
    });
    await line.first().waitFor();
    expect(await page.locator('.critical-health', { hasText: 'firing' }).count()).toBe(0);
  });
});
