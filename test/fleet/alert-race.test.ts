// Two deliveries of a new alert occurrence a few milliseconds apart (its firing, then its resolution) both
// read nothing stored (shared/db/alerts.ts recordAlerts). Written without a condition, the firing written last
// stayed and the alert fired on, its issue never resolving. The first write of an occurrence now holds only where
// no later notification is stored. The race is made on the wire: the earlier delivery's write is held until the
// later one is stored, with no timing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AlertNotice, recordAlerts } from '../../shared/db/alerts.js';
import { getItem } from '../../shared/db/client.js';
import { storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';
import { type DynamoProxy, type WireRequest, whileHeld } from '../support/dynamo-proxy.js';

const NOW = Date.now();
const at = (msAgo: number) => new Date(NOW - msAgo);
const STARTS_AT = at(3_600_000).toISOString();

function firing(cluster_id: string, fingerprint: string): AlertNotice {
  return {
    alert_id: `${fingerprint}-${STARTS_AT}`,
    cluster_id,
    alert_name: `Race-${fingerprint}`,
    severity: 'warning',
    status: 'Firing',
    starts_at: STARTS_AT,
    ends_at: null,
    fingerprint,
    labels: { alertname: `Race-${fingerprint}`, cluster_id },
    annotations: {},
    summary: 'slow queries',
    detail: '',
    dashboard_url: '',
  };
}
const resolved = (n: AlertNotice): AlertNotice => ({ ...n, status: 'Resolved', ends_at: at(60_000).toISOString() });
const keyOf = (n: AlertNotice) => ({ pk: `CLUSTER#${n.cluster_id}`, sk: `ALERT#${n.starts_at}#${n.fingerprint}` });

/** The write of the alerts (batched, in a transaction, or one put) that names `fingerprint`. */
const writeOf = (fingerprint: string) => (r: WireRequest) =>
  ['TransactWriteItems', 'BatchWriteItem', 'PutItem'].includes(r.operation) && JSON.stringify(r.input).includes(`#${fingerprint}"`);

let proxy: DynamoProxy;
beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
});
afterAll(() => proxy.close());

describe('a new occurrence delivered twice at once', () => {
  it('keeps the resolution when the firing before it is written after it (the firing counts as a duplicate)', async () => {
    const cluster = await storedCluster();
    const alert = firing(cluster, 'fired-then-resolved');
    const resolution = whileHeld(proxy, writeOf('fired-then-resolved'), () => recordAlerts([resolved(alert)], at(1_000)));
    expect(await recordAlerts([alert], at(2_000))).toEqual(['duplicate']);
    expect(await resolution.done()).toEqual(['new']);
    expect(await getItem('alerts', keyOf(alert), true)).toMatchObject({ status: 'Resolved', notified_at: at(1_000).getTime() });
    expect((await getItem('alerts', keyOf(alert), true))?.gsi2pk).toBeUndefined(); // out of the firing index
  });

  it('writes the later one over the earlier when they land in order', async () => {
    const cluster = await storedCluster();
    const alert = firing(cluster, 'in-order');
    const earlier = whileHeld(proxy, writeOf('in-order'), () => recordAlerts([alert], at(2_000)));
    expect(await recordAlerts([resolved(alert)], at(1_000))).toEqual(['new']);
    expect(await earlier.done()).toEqual(['new']);
    expect(await getItem('alerts', keyOf(alert), true)).toMatchObject({ status: 'Resolved', notified_at: at(1_000).getTime() });
  });

  it('keeps the one stored first when both carry the same millisecond (the later resolution is not overwritten by its firing)', async () => {
    const cluster = await storedCluster();
    const alert = firing(cluster, 'same-instant');
    const resolution = whileHeld(proxy, writeOf('same-instant'), () => recordAlerts([resolved(alert)], at(1_000)));
    expect(await recordAlerts([alert], at(1_000))).toEqual(['duplicate']);
    expect(await resolution.done()).toEqual(['new']);
    expect(await getItem('alerts', keyOf(alert), true)).toMatchObject({ status: 'Resolved' });
  });

  it('writes them one by one when their transaction keeps meeting another (an HA pair at once), not a 409 that loses the group', async () => {
    const cluster = await storedCluster();
    const alerts = ['conflict-a', 'conflict-b'].map((f) => firing(cluster, f));
    let cancelled = 0;
    const stop = proxy.watch(({ operation, input }) => {
      if (operation !== 'TransactWriteItems' || !JSON.stringify(input).includes('#conflict-a"')) return undefined;
      cancelled++;
      return {
        type: 'TransactionCanceledException',
        message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [TransactionConflict, None]',
        fields: { CancellationReasons: [{ Code: 'TransactionConflict' }, { Code: 'None' }] },
      };
    });
    try {
      expect(await recordAlerts(alerts, at(2_000))).toEqual(['new', 'new']);
    } finally {
      stop();
    }
    expect(cancelled).toBeGreaterThan(1); // transactWrite's own retries first
    for (const a of alerts) expect(await getItem('alerts', keyOf(a), true)).toMatchObject({ status: 'Firing', notified_at: at(2_000).getTime() });
  });

  it('still writes the rest of a notification when one of its new alerts loses', async () => {
    const cluster = await storedCluster();
    const lost = firing(cluster, 'group-lost');
    const kept = firing(cluster, 'group-kept');
    const resolution = whileHeld(proxy, writeOf('group-lost'), () => recordAlerts([resolved(lost)], at(1_000)));
    expect(await recordAlerts([lost, kept], at(2_000))).toEqual(['duplicate', 'new']);
    expect(await resolution.done()).toEqual(['new']);
    expect(await getItem('alerts', keyOf(lost), true)).toMatchObject({ status: 'Resolved' });
    expect(await getItem('alerts', keyOf(kept), true)).toMatchObject({ status: 'Firing', notified_at: at(2_000).getTime() });
  });
});
