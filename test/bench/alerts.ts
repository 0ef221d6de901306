// Alertmanager ingest: one webhook notification of 3,000 alerts (≈1.2 MB), the
// largest group the 6 MB ingest body is sized for with room to spare. Each run
// is a new group (new fingerprints), timed through ingestAlerts: validation,
// the inventory check, the batched reads and writes, and the issue grouping of
// the clusters it touched. Then the same notification again (a repeat: all
// duplicates, reads only), and the repeat of a group firing for a week, a day
// after its last write: every alert due for renewal, at most 200 renewed.
import { randomUUID } from 'node:crypto';
import { demoClusters } from '../../infra/local/demo-fleet.js';
import { FIRING_RENEWALS_PER_CALL, recordAlerts, type AlertNotice } from '../../shared/db/alerts.js';
import { ingestAlerts, ingestClusters } from '../../shared/fleet/ingest.js';
import type { BenchContext } from './run.js';

export const title = 'Alertmanager ingest (shared/fleet/README.md): one notification of 3,000 alerts';

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const RUNS = 5;

function notification(clusterIds: string[], size: number, startsAt: string) {
  const run = randomUUID().slice(0, 8);
  return Array.from({ length: size }, (_, i) => ({
    status: 'firing',
    labels: {
      alertname: 'TabletUnhealthy',
      severity: 'warning',
      cluster_id: clusterIds[i % clusterIds.length]!,
      tablet: `t-${run}-${i}`,
      instance: `be-${i % 12}`,
    },
    annotations: { summary: `Tablet t-${i} unhealthy`, description: `Tablet t-${i} on be-${i % 12} has fewer replicas than required.` },
    startsAt,
    endsAt: '0001-01-01T00:00:00Z',
    generatorURL: 'http://prometheus.example.com/graph?g0.expr=tablet_unhealthy',
    fingerprint: randomUUID().replace(/-/g, '').slice(0, 16),
  }));
}

const summary = (t: number[]) => {
  const sorted = [...t].sort((a, b) => a - b);
  return `p50 ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms (${t.length} runs)`;
};

/** The notices ingestAlerts derives from those alerts, for timing the store alone. */
const noticesOf = (alerts: ReturnType<typeof notification>): AlertNotice[] =>
  alerts.map((a) => ({
    alert_id: `${a.fingerprint}-${Math.floor(Date.parse(a.startsAt) / 1000)}`,
    cluster_id: a.labels.cluster_id,
    alert_name: a.labels.alertname,
    severity: 'Warning',
    status: 'Firing',
    starts_at: new Date(a.startsAt).toISOString(),
    ends_at: null,
    fingerprint: a.fingerprint,
    labels: a.labels,
    annotations: a.annotations,
    summary: a.annotations.summary,
    detail: a.annotations.description,
    dashboard_url: a.generatorURL,
  }));

export async function run({ report, freshTables }: BenchContext): Promise<void> {
  const now = new Date();
  const fleet = demoClusters(300, 3).map((c) => c.inventory);
  const startsAt = new Date(now.getTime() - 3_600_000).toISOString();
  for (const clusters of [1, 300]) {
    const ids = fleet.slice(0, clusters).map((c) => c.cluster_id);
    const store: number[] = [];
    const first: number[] = [];
    const repeat: number[] = [];
    const renew: number[] = [];
    let bytes = 0;
    for (let r = 0; r < RUNS; r++) {
      // Each run on empty tables: the same work every time.
      await freshTables();
      await ingestClusters(fleet, now);
      let start = process.hrtime.bigint();
      const stored = await recordAlerts(noticesOf(notification(ids, 3000, startsAt)), now);
      store.push(ms(start));
      if (stored.some((o) => o !== 'new')) throw new Error('store: not all new');

      // A group firing for 8 days, last written 25 h ago: its repeat now renews what is due, at most FIRING_RENEWALS_PER_CALL.
      const weekOld = noticesOf(notification(ids, 3000, new Date(now.getTime() - 8 * 86_400_000).toISOString()));
      await recordAlerts(weekOld, new Date(now.getTime() - 25 * 3_600_000));
      start = process.hrtime.bigint();
      const renewed = await recordAlerts(weekOld, now);
      renew.push(ms(start));
      if (renewed.some((o) => o !== 'duplicate')) throw new Error('renewal: not all duplicates');

      await freshTables();
      await ingestClusters(fleet, now);
      const alerts = notification(ids, 3000, startsAt);
      bytes = JSON.stringify({ version: '4', alerts }).length;
      start = process.hrtime.bigint();
      const result = await ingestAlerts(alerts, now);
      first.push(ms(start));
      if (result.accepted !== 3000 || result.duplicates !== 0) throw new Error(`stored ${result.accepted}, ${result.duplicates} duplicates`);
      start = process.hrtime.bigint();
      const again = await ingestAlerts(alerts, new Date(now.getTime() + 1000));
      repeat.push(ms(start));
      if (again.duplicates !== 3000) throw new Error(`repeat: ${again.duplicates} duplicates`);
    }
    const where = clusters === 1 ? 'one cluster' : `${clusters} clusters`;
    report('alerts', `store one notification of 3,000 new alerts (batched read + writes), ${where}`, summary(store));
    report(
      'alerts',
      `ingest one Alertmanager notification of 3,000 new alerts (${(bytes / 1e6).toFixed(1)} MB), ${where}, issue grouping included`,
      summary(first),
    );
    report('alerts', `the same notification repeated (3,000 duplicates), ${where}`, summary(repeat));
    report(
      'alerts',
      `the repeat of a 3,000-alert group firing 8 days, a day after its last write (${FIRING_RENEWALS_PER_CALL} renewed, shared/db/alerts.ts), ${where}`,
      summary(renew),
    );
  }
}
