// The demo fleet: deterministic, realistic in its spread of health, and loaded
// through the ingest path with nothing refused.
import { beforeAll, describe, expect, it } from 'vitest';
import { demoAlerts, demoClusters, demoLogs, demoSamples, loadDemoFleet } from '../../infra/local/demo-fleet.js';
import { listAlertsSince } from '../../shared/db/alerts.js';
import { listClusters } from '../../shared/db/clusters.js';
import { windowDays } from '../../shared/db/days.js';
import { readFleetRollups } from '../../shared/db/metrics.js';
import { average } from '../../shared/fleet/rollup.js';
import { ClusterInput, METRIC_KEYS } from '../../shared/fleet/records.js';
import { scoreFleet } from '../../shared/scoring/fleet-score.js';
import { loadFleetInputs } from '../../shared/scoring/fleet-view.js';
import { defaultHealthRules } from '../scoring/fixtures.js';
import { useTestTables } from '../support/dynamo.js';

const NOW = new Date('2026-11-20T12:30:00Z');

describe('demo fleet generator', () => {
  it('is deterministic for a seed and differs across seeds', () => {
    expect(demoClusters(30, 7)).toEqual(demoClusters(30, 7));
    expect(demoClusters(30, 7)).not.toEqual(demoClusters(30, 8));
    const c = demoClusters(3, 7)[0]!;
    expect([...demoSamples(c, 2, NOW, 7)]).toEqual([...demoSamples(c, 2, NOW, 7)]);
  });

  it('spreads 60 clusters over 15 customers, all tiers, with most healthy, some warning, a few critical', () => {
    const fleet = demoClusters(60);
    for (const c of fleet) expect(ClusterInput.safeParse(c.inventory).success).toBe(true);
    expect(new Set(fleet.map((c) => c.inventory.customer_name)).size).toBe(15);
    expect(new Set(fleet.map((c) => c.inventory.customer_tier))).toEqual(new Set(['S', 'A', 'B']));
    expect(new Set(fleet.map((c) => c.inventory.cluster_id)).size).toBe(60);
    const count = (h: string) => fleet.filter((c) => c.health === h).length;
    expect(count('healthy')).toBeGreaterThan(35);
    expect(count('warning')).toBeGreaterThanOrEqual(6);
    expect(count('critical')).toBeGreaterThanOrEqual(3);
    expect(count('critical')).toBeLessThan(count('warning'));
  });

  it('makes troubled clusters drift towards their thresholds and leaves healthy ones in range', () => {
    const fleet = demoClusters(24);
    const lastDay = (c: (typeof fleet)[number], key: string) =>
      [...demoSamples(c, 14, NOW)]
        .filter((s) => s.metric_key === key)
        .slice(-24)
        .map((s) => s.value);
    const disk = fleet.find((c) => c.trouble === 'disk' && c.health === 'critical')!;
    expect(Math.max(...lastDay(disk, 'disk_used_pct'))).toBeGreaterThan(90);
    const compaction = fleet.find((c) => c.trouble === 'compaction')!;
    const series = [...demoSamples(compaction, 14, NOW)].filter((s) => s.metric_key === 'compaction_score').map((s) => s.value);
    expect(series.at(-1)!).toBeGreaterThan(series[0]! * 4); // rising
    for (const healthy of fleet.filter((c) => c.health === 'healthy' && !c.watch)) expect(Math.max(...lastDay(healthy, 'disk_used_pct'))).toBeLessThan(70);
    // A cluster to watch keeps its disk past the risk rules' warning (80%), short of their critical (90%).
    const watched = fleet.filter((c) => c.watch);
    expect(watched.length).toBeGreaterThan(0);
    const watchedDisk = watched.flatMap((c) => lastDay(c, 'disk_used_pct'));
    expect(Math.min(...watchedDisk)).toBeGreaterThan(78);
    expect(Math.max(...watchedDisk)).toBeLessThan(90);
  });

  it('keeps each hour a maximum latency above its P99, troubled clusters too, and the average below it', () => {
    const fleet = demoClusters(24);
    expect(fleet.some((c) => c.trouble && c.health === 'critical')).toBe(true);
    for (const c of fleet) {
      const hours = new Map<string, Record<string, number>>();
      for (const s of demoSamples(c, 14, NOW)) hours.set(s.at, { ...hours.get(s.at), [s.metric_key]: s.value });
      for (const [at, h] of hours) {
        expect(h.max_latency_ms, `${c.inventory.cluster_name} ${at}`).toBeGreaterThanOrEqual(h.p99_latency_ms!);
        expect(h.avg_latency_ms, `${c.inventory.cluster_name} ${at}`).toBeLessThanOrEqual(h.p99_latency_ms!);
      }
    }
  });

  it("has alert episodes that fire and resolve, each troubled cluster's last one still firing, and error signatures in logs", () => {
    const fleet = demoClusters(24);
    const { firing, resolved } = demoAlerts(fleet, 14, NOW);
    expect(firing.length).toBeGreaterThan(resolved.length);
    const troubled = fleet.filter((c) => c.health !== 'healthy').map((c) => c.inventory.cluster_id);
    const open = firing.filter((f) => !resolved.some((r) => r.fingerprint === f.fingerprint && r.startsAt === f.startsAt));
    expect(new Set(open.map((a) => a.labels.cluster_id))).toEqual(new Set(troubled));
    expect(open.length).toBe(troubled.length);
    const logs = demoLogs(fleet, 14, NOW);
    expect(logs.some((l) => l.level === 'error' && /Compaction backlog|no space left|exceed limit/.test(l.message))).toBe(true);
  });
});

describe('loading the demo fleet through the ingest path', () => {
  beforeAll(async () => {
    await useTestTables();
  });

  it('stores every record with nothing refused', async () => {
    const result = await loadDemoFleet(12, { now: NOW });
    expect(result).toMatchObject({ clusters: 12, samples: 12 * 14 * 24 * METRIC_KEYS.length, rejected: 0 });
    expect(await listClusters()).toHaveLength(12);
    const rollups = await readFleetRollups(windowDays(15, NOW));
    expect(rollups.size).toBe(12);
    const one = [...rollups.values()][0]!;
    expect(one.map((r) => r.day)).toHaveLength(15); // the 14×24 hours span 15 calendar days
    expect(one.reduce((n, r) => n + r.metrics.qps!.count, 0)).toBe(14 * 24);
    expect(average(one.at(-1)!.metrics.disk_used_pct!)).toBeGreaterThan(0);
    expect((await listAlertsSince(new Date(NOW.getTime() - 15 * 86_400_000), NOW)).length).toBeGreaterThan(0);
  });

  it('is fresh under the shipped stale_after_minutes until the feed has been silent for hours (issue 20 §4)', async () => {
    // Loaded at 12:30, the newest samples are 11:00's. The feed sends each hour once it has passed, checking every
    // 5 minutes: 12:00's samples go out by 13:05, so a running demo's newest sample is at most ~2 h 5 min old.
    const rules = defaultHealthRules();
    const at = (iso: string) => new Date(iso);
    const scoredAt = async (now: Date) => scoreFleet(await loadFleetInputs(rules.lookback_days, rules.lookback_days, now), rules, now);
    const running = await scoredAt(at('2026-11-20T13:05:00Z'));
    expect(running).toHaveLength(12);
    expect(running.filter((s) => s.metrics_stale)).toEqual([]);
    expect(new Set(running.map((s) => s.last_metric_at))).toEqual(new Set(['2026-11-20T11:00:00.000Z']));
    // With the feed off, three hours after the last sample every cluster says so first.
    const silent = await scoredAt(at('2026-11-20T14:01:00Z'));
    expect(silent.every((s) => s.metrics_stale && s.risk_reasons[0] === 'no metrics since 2026-11-20 11:00 UTC')).toBe(true);
  });
});
