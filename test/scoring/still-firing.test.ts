// An alert firing for longer than a view's window still counts in it (shared/db/alerts.ts: the
// firing index). The views read alerts by when they started, 14 days back; before the index,
// a disk alert firing for three weeks dropped out of its cluster's scores on day 15.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AlertNotice,
  FIRING_RENEWAL_AGE_MS,
  FIRING_RENEWAL_MS,
  FIRING_RENEWALS_PER_CALL,
  FIRING_UNHEARD_MS,
  listAlertFactsSince,
  listAlertsSince,
  recordAlerts,
  retireUnheardFiring,
} from '../../shared/db/alerts.js';
import { withTableAccess } from '../../shared/db/access.js';
import { getItem, putItem } from '../../shared/db/client.js';
import { computeFleetView } from '../../shared/scoring/fleet-view.js';
import { WORKERS } from '../../shared/workers.js';
import { SQL_ALERT_DAYS } from '../../shared/chat/tools.js';
import { LIMITS } from '../../shared/rules/schemas.js';
import { CRITICAL_ALERT_DAYS } from '../../shared/scoring/critical.js';
import { storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';
import { type DynamoProxy, tableOf, whileHeld } from '../support/dynamo-proxy.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = new Date();
const WINDOW_START = new Date(NOW.getTime() - 14 * DAY);
const ago = (ms: number) => new Date(NOW.getTime() - ms);

function notice(cluster_id: string, fingerprint: string, startedAgo: number, endedAgo: number | null = null): AlertNotice {
  const starts_at = ago(startedAgo).toISOString();
  return {
    alert_id: `${fingerprint}-${starts_at}`,
    cluster_id,
    alert_name: `Alert-${fingerprint}`,
    severity: 'critical',
    status: endedAgo === null ? 'Firing' : 'Resolved',
    starts_at,
    ends_at: endedAgo === null ? null : ago(endedAgo).toISOString(),
    fingerprint,
    labels: { alertname: `Alert-${fingerprint}`, cluster_id },
    annotations: {},
    summary: 'disk almost full',
    detail: '',
    dashboard_url: '',
  };
}

const keyOf = (n: AlertNotice) => ({ pk: `CLUSTER#${n.cluster_id}`, sk: `ALERT#${n.starts_at}#${n.fingerprint}` });
const factsOf = async (clusterId: string, since = WINDOW_START) =>
  (await listAlertFactsSince(since, NOW))
    .filter((a) => a.cluster_id === clusterId)
    .map((a) => a.alert_name)
    .sort();

let proxy: DynamoProxy;
beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
});
afterAll(() => proxy.close());

describe('alerts firing since before a window', () => {
  it('count in it while Alertmanager still repeats them; resolved ones and ones not heard of for the window do not', async () => {
    const cluster = await storedCluster();
    const longFiring = notice(cluster, 'long', 21 * DAY);
    const lostResolution = notice(cluster, 'lost', 21 * DAY);
    const resolved = notice(cluster, 'ended', 21 * DAY);
    const recent = notice(cluster, 'recent', 3 * DAY);
    // All four fired 20 days ago; Alertmanager then resolved one and stopped repeating another.
    await recordAlerts([longFiring, lostResolution, resolved], ago(20 * DAY));
    await recordAlerts(
      [resolved].map((n) => ({ ...n, status: 'Resolved', ends_at: ago(5 * DAY).toISOString() })),
      ago(5 * DAY),
    );
    // Repeats of what still fires, every 4 hours since: each renews it at most every FIRING_RENEWAL_MS.
    for (let t = 20 * DAY - 4 * HOUR; t > 0; t -= 4 * HOUR) await recordAlerts([longFiring], ago(t));
    await recordAlerts([recent], ago(3 * DAY));

    expect(await factsOf(cluster)).toEqual(['Alert-long', 'Alert-recent']);
    // The whole records too (the chat's SQL snapshot reads them), oldest first.
    const records = (await listAlertsSince(WINDOW_START, NOW)).filter((a) => a.cluster_id === cluster);
    expect(records.map((a) => a.alert_name)).toEqual(['Alert-long', 'Alert-recent']);

    // The views count it: the 7-day count of the unified score, and the critical clusters' groups.
    const view = await computeFleetView(NOW);
    const score = view.scores.find((s) => s.cluster_id === cluster)!;
    expect(score.firing_alert_count_7d).toBe(2);
    expect(
      view.fleet
        .find((d) => d.cluster.cluster_id === cluster)!
        .alerts.map((a) => a.alert_name)
        .sort(),
    ).toEqual(['Alert-long', 'Alert-recent']);
  });

  it('a repeat that changes nothing is written at most every FIRING_RENEWAL_MS once the alert is FIRING_RENEWAL_AGE_MS old, and keeps its updated_at', async () => {
    const cluster = await storedCluster();
    const alert = notice(cluster, 'repeat', 30 * DAY);
    const first = ago(30 * HOUR);
    expect(await recordAlerts([alert], first)).toEqual(['new']);
    const written = await getItem<{ notified_at: number; updated_at: string }>('alerts', keyOf(alert), true);
    expect(written!.notified_at).toBe(first.getTime());

    expect(await recordAlerts([alert], new Date(first.getTime() + FIRING_RENEWAL_MS - 1))).toEqual(['duplicate']);
    expect((await getItem<{ notified_at: number }>('alerts', keyOf(alert), true))!.notified_at).toBe(first.getTime());

    const renewed = new Date(first.getTime() + FIRING_RENEWAL_MS);
    expect(await recordAlerts([alert], renewed)).toEqual(['duplicate']);
    const after = await getItem<{ notified_at: number; updated_at: string }>('alerts', keyOf(alert), true);
    expect(after).toMatchObject({ notified_at: renewed.getTime(), updated_at: written!.updated_at });

    // Heard 6 hours ago: it counts in a window from 7 hours back, not in one from 5.
    expect(await factsOf(cluster, ago(7 * HOUR))).toEqual(['Alert-repeat']);
    expect(await factsOf(cluster, ago(5 * HOUR))).toEqual([]);
  });

  it("a younger alert's repeats write nothing: every window reads it by its start", async () => {
    const cluster = await storedCluster();
    const alert = notice(cluster, 'young', FIRING_RENEWAL_AGE_MS - 3 * DAY);
    const first = ago(2 * DAY + HOUR);
    await recordAlerts([alert], first);
    // Two days of repeats later it is still under FIRING_RENEWAL_AGE_MS old: not written again.
    expect(await recordAlerts([alert], ago(HOUR))).toEqual(['duplicate']);
    expect((await getItem<{ notified_at: number }>('alerts', keyOf(alert), true))!.notified_at).toBe(first.getTime());
    expect(await factsOf(cluster)).toEqual(['Alert-young']);
  });

  it('renews at most FIRING_RENEWALS_PER_CALL alerts a notification, the longest unheard first; the rest at the next repeat', async () => {
    const cluster = await storedCluster();
    const group = Array.from({ length: FIRING_RENEWALS_PER_CALL + 30 }, (_, i) => notice(cluster, `g${String(i).padStart(3, '0')}`, 20 * DAY));
    // Written together two days ago, except the last 30, heard three days ago: those are the longest unheard.
    await recordAlerts(group.slice(0, FIRING_RENEWALS_PER_CALL), ago(2 * DAY));
    await recordAlerts(group.slice(FIRING_RENEWALS_PER_CALL), ago(3 * DAY));
    const heard = async () => Promise.all(group.map(async (a) => (await getItem<{ notified_at: number }>('alerts', keyOf(a), true))!.notified_at));

    const repeat = ago(HOUR);
    expect(new Set(await recordAlerts(group, repeat))).toEqual(new Set(['duplicate']));
    const once = await heard();
    expect(once.filter((t) => t === repeat.getTime())).toHaveLength(FIRING_RENEWALS_PER_CALL);
    expect(once.slice(FIRING_RENEWALS_PER_CALL).every((t) => t === repeat.getTime())).toBe(true); // the 30 longest unheard first

    const next = new Date(repeat.getTime() + 1);
    await recordAlerts(group, next);
    const twice = await heard();
    expect(twice.filter((t) => t === next.getTime())).toHaveLength(30); // the rest; those renewed just before are not due
    expect(twice.every((t) => t >= repeat.getTime())).toBe(true);
  });

  it('leaves the firing index when it resolves', async () => {
    const cluster = await storedCluster();
    const alert = notice(cluster, 'resolves', 20 * DAY);
    await recordAlerts([alert], ago(HOUR));
    expect(await factsOf(cluster)).toEqual(['Alert-resolves']);
    await recordAlerts([{ ...alert, status: 'Resolved', ends_at: ago(30 * 60_000).toISOString() }], ago(30 * 60_000));
    expect(await factsOf(cluster)).toEqual([]);
    expect(await getItem('alerts', keyOf(alert), true)).not.toHaveProperty('gsi2pk');
  });

  it('an alert stored before the firing index joins it at its next repeat', async () => {
    const cluster = await storedCluster();
    const alert = notice(cluster, 'legacy', 20 * DAY);
    await recordAlerts([alert], ago(2 * HOUR));
    // The item as the code before the index wrote it: the same, without the index's keys.
    const { gsi2pk: _pk, gsi2sk: _sk, ...legacy } = (await getItem<Record<string, unknown>>('alerts', keyOf(alert), true))!;
    await putItem('alerts', { ...legacy, ...keyOf(alert) });
    expect(await factsOf(cluster)).toEqual([]);

    // Repeated an hour later (within FIRING_RENEWAL_MS of its last write): written all the same.
    expect(await recordAlerts([alert], ago(HOUR))).toEqual(['duplicate']);
    expect(await factsOf(cluster)).toEqual(['Alert-legacy']);
  });

  it('FIRING_UNHEARD_MS outlasts every window that reads the firing index: retiring takes no alert a window counts', () => {
    const longest = Math.max(CRITICAL_ALERT_DAYS, LIMITS.lookbackDays, SQL_ALERT_DAYS) * DAY;
    expect(FIRING_UNHEARD_MS).toBeGreaterThan(longest + 2 * DAY);
  });

  it('leaves the firing index once unheard for FIRING_UNHEARD_MS (its resolution never came), and rejoins it when heard again', async () => {
    const cluster = await storedCluster();
    const lost = notice(cluster, 'orphan', 60 * DAY);
    const heard = notice(cluster, 'heard', 60 * DAY);
    await recordAlerts([lost, heard], ago(FIRING_UNHEARD_MS + DAY));
    await recordAlerts([heard], ago(FIRING_UNHEARD_MS - DAY)); // a renewal: heard within the cutoff
    // Retired by the recompute's pass (with the worker's declared access: updates, no put or delete), any
    // other orphan of this file's table with it; the one heard stays.
    const asRecompute = <T>(work: () => Promise<T>) => withTableAccess('recompute', WORKERS.recompute, work);
    expect(await asRecompute(() => retireUnheardFiring(NOW))).toBeGreaterThanOrEqual(1);
    await expect(asRecompute(() => putItem('alerts', { ...keyOf(lost), status: 'Resolved' }))).rejects.toThrow(
      /readupdate access to table alerts, which grants no PutItem/,
    );
    expect(await getItem('alerts', keyOf(lost), true)).not.toHaveProperty('gsi2pk');
    expect(await getItem('alerts', keyOf(heard), true)).toHaveProperty('gsi2pk');
    expect(await retireUnheardFiring(NOW)).toBe(0);
    // Still Firing as stored: the cluster's history keeps it. Repeated again, it counts again.
    expect(await getItem('alerts', keyOf(lost), true)).toMatchObject({ status: 'Firing' });
    expect(await recordAlerts([lost], ago(HOUR))).toEqual(['duplicate']);
    expect(await factsOf(cluster, ago(30 * DAY))).toEqual(['Alert-orphan']);
  });

  it('keeps an alert heard between the read and the retirement: the update is conditional on what was read', async () => {
    const cluster = await storedCluster();
    const alert = notice(cluster, 'raced', 60 * DAY);
    await recordAlerts([alert], ago(FIRING_UNHEARD_MS + DAY));
    // Its retirement is held on the wire while a repeat renews it.
    const renewal = whileHeld(
      proxy,
      (r) => r.operation === 'UpdateItem' && tableOf(r).endsWith('alerts') && JSON.stringify(r.input.Key).includes('#raced'),
      () => recordAlerts([alert], ago(HOUR)),
    );
    await retireUnheardFiring(NOW);
    expect(await renewal.done()).toEqual(['duplicate']);
    expect(await getItem('alerts', keyOf(alert), true)).toMatchObject({ gsi2pk: expect.any(String), notified_at: ago(HOUR).getTime() });
    expect(await factsOf(cluster)).toEqual(['Alert-raced']);
  });
});
