// Alert occurrences against DynamoDB Local through the proxy: the notification received
// last wins for an occurrence never stored before too (shared/db/alerts.ts recordAlerts).
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { listClusterAlerts, recordAlerts, type AlertNotice } from '../../shared/db/alerts.js';
import { useTestTables } from '../support/dynamo.js';
import type { DynamoProxy } from '../support/dynamo-proxy.js';

let proxy: DynamoProxy;
beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
});

function notice(clusterId: string, over: Partial<AlertNotice> = {}): AlertNotice {
  return {
    alert_id: 'fp1-1',
    cluster_id: clusterId,
    alert_name: 'DiskFull',
    severity: 'Critical',
    status: 'Firing',
    starts_at: new Date(Date.now() - 3_600_000).toISOString(),
    ends_at: null,
    fingerprint: 'fp1',
    labels: { alertname: 'DiskFull' },
    annotations: {},
    summary: 'DiskFull',
    detail: '',
    dashboard_url: '',
    ...over,
  };
}

/** Holds every alerts write stamped `stamp` (epoch ms) until `gate` settles; `seen` resolves at the first. */
function holdWritesOf(stamp: number, gate: Promise<void>): { seen: Promise<void>; stop: () => void } {
  let resolve!: () => void;
  const seen = new Promise<void>((r) => (resolve = r));
  const stop = proxy.watch(({ operation, input }) => {
    if (!String(input.TableName ?? Object.keys(input.RequestItems ?? {})[0]).endsWith('alerts')) return undefined;
    if (!['PutItem', 'BatchWriteItem'].includes(operation)) return undefined;
    if (!JSON.stringify(input).includes(`"notified_at":{"N":"${stamp}"}`)) return undefined;
    resolve();
    return { hold: gate };
  });
  return { seen, stop };
}

describe('a new occurrence delivered twice at once', () => {
  it('keeps the notification received last when the earlier one is written last; the earlier is a duplicate', async () => {
    const cluster = randomUUID();
    const firing = notice(cluster);
    const resolved = notice(cluster, { status: 'Resolved', ends_at: new Date().toISOString() });
    const t1 = new Date(Date.now() - 1_000);
    const t2 = new Date();
    let release!: () => void;
    const held = holdWritesOf(t1.getTime(), new Promise<void>((r) => (release = r)));
    try {
      const first = recordAlerts([firing], t1); // received first, its write slow
      await held.seen; // it read nothing stored, and its write is on the way
      expect(await recordAlerts([resolved], t2)).toEqual(['new']); // received later, stored first
      release();
      expect(await first).toEqual(['duplicate']); // refused: a later notification is stored
    } finally {
      held.stop();
    }
    const stored = await listClusterAlerts(cluster, new Date(0));
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ status: 'Resolved', ends_at: resolved.ends_at });
  });
});
