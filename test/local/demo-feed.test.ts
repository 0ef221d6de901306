// The living demo fleet: whole hours fed once each, across restarts; incidents
// that fire and resolve; a long stop resumes with the lookback; a fleet that is
// not the demo fleet is left alone. The clock is injected: no wall-clock waits.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createDemoFeed } from '../../infra/local/demo-feed.js';
import { loadDemoFleet } from '../../infra/local/demo-fleet.js';
import { listAlertsSince } from '../../shared/db/alerts.js';
import { windowDays } from '../../shared/db/days.js';
import { readFleetRollups } from '../../shared/db/metrics.js';
import { METRIC_KEYS } from '../../shared/fleet/records.js';
import { useTestTables } from '../support/dynamo.js';

const T0 = new Date('2026-11-20T12:30:00Z');
const HOUR = 3_600_000;
const CLUSTERS = 12;

/** How many hourly qps samples each cluster's rollups hold over the last `days` days up to `now`. */
async function qpsCounts(now: Date, days = 20): Promise<number[]> {
  const rollups = await readFleetRollups(windowDays(days, now));
  return [...rollups.values()].map((days) => days.reduce((n, r) => n + (r.metrics.qps?.count ?? 0), 0));
}

describe('the living demo fleet', () => {
  let dataDir: string;
  let clock = T0;
  const feedAt = () => createDemoFeed({ dataDir, clusters: CLUSTERS, now: () => clock });

  beforeAll(async () => {
    await useTestTables();
    await loadDemoFleet(CLUSTERS, { now: T0 });
    dataDir = await mkdtemp(join(tmpdir(), 'demo-feed-'));
  }, 90_000);

  it('feeds each whole hour once, for every cluster, and carries on after a restart', async () => {
    const feed = feedAt();
    expect(await feed.tick()).toMatchObject({ hoursFed: 0, samples: 0 }); // the loader fed up to 11:00
    clock = new Date(T0.getTime() + 3 * HOUR); // 15:30: 12:00, 13:00 and 14:00 are whole hours past
    expect(await feed.tick()).toMatchObject({ hoursFed: 3, samples: 3 * CLUSTERS * METRIC_KEYS.length });
    expect(await feed.tick()).toMatchObject({ hoursFed: 0, samples: 0 });
    expect(new Set(await qpsCounts(clock))).toEqual(new Set([14 * 24 + 3]));

    const restarted = feedAt();
    expect(await restarted.tick()).toMatchObject({ hoursFed: 0 });
    clock = new Date(clock.getTime() + HOUR);
    expect(await restarted.tick()).toMatchObject({ hoursFed: 1, samples: CLUSTERS * METRIC_KEYS.length });
    expect(new Set(await qpsCounts(clock))).toEqual(new Set([14 * 24 + 4]));
    // The fed hours keep the loaded ones' latency order: no day's highest P99 above its highest maximum.
    for (const days of (await readFleetRollups(windowDays(2, clock))).values())
      for (const day of days) expect(day.metrics.max_latency_ms!.max).toBeGreaterThanOrEqual(day.metrics.p99_latency_ms!.max);
  });

  it('brings incidents that fire and later resolve, through the alert ingest path', async () => {
    const feed = feedAt();
    const since = clock;
    let fired = 0;
    let resolved = 0;
    for (let h = 0; h < 72; h++) {
      clock = new Date(clock.getTime() + HOUR);
      const tick = await feed.tick();
      fired += tick.alertsFired;
      resolved += tick.alertsResolved;
    }
    expect(fired).toBeGreaterThan(0);
    expect(resolved).toBeGreaterThan(0);
    const alerts = (await listAlertsSince(since, clock)).filter((a) => a.starts_at >= since.toISOString());
    expect(alerts.length).toBe(fired);
    expect(alerts.some((a) => a.status === 'Resolved' && a.ends_at)).toBe(true);
  }, 60_000);

  it('after a long stop resumes with the 14-day lookback, not every hour missed', async () => {
    clock = new Date(clock.getTime() + 30 * 24 * HOUR);
    expect(await feedAt().tick()).toMatchObject({ hoursFed: 14 * 24 });
  }, 60_000);

  it('a later start with another DEMO_CLUSTERS goes on feeding the fleet loaded, and says so once', async () => {
    for (const asked of [CLUSTERS + 8, CLUSTERS - 5]) {
      const lines: string[] = [];
      const resized = createDemoFeed({ dataDir, clusters: asked, now: () => clock, log: (l) => lines.push(l) });
      clock = new Date(clock.getTime() + HOUR);
      // Every sample taken (none for a cluster the fleet does not have), for each of the clusters loaded.
      expect(await resized.tick()).toMatchObject({ hoursFed: 1, samples: CLUSTERS * METRIC_KEYS.length });
      clock = new Date(clock.getTime() + HOUR);
      expect(await resized.tick()).toMatchObject({ hoursFed: 1, samples: CLUSTERS * METRIC_KEYS.length });
      expect(lines).toEqual([
        `demo feed: ${dataDir} holds a demo fleet of ${CLUSTERS} clusters, which goes on being fed; DEMO_CLUSTERS=${asked} applies to a new data folder (delete this one to load ${asked})`,
      ]);
    }
  }, 60_000);

  it('leaves a fleet that is not the demo fleet alone, and says so once', async () => {
    const lines: string[] = [];
    const other = createDemoFeed({
      dataDir: await mkdtemp(join(tmpdir(), 'demo-feed-other-')),
      clusters: CLUSTERS,
      seed: 7,
      now: () => clock,
      log: (l) => lines.push(l),
    });
    clock = new Date(clock.getTime() + 5 * HOUR);
    expect(await other.tick()).toMatchObject({ hoursFed: 0, samples: 0 });
    expect(await other.tick()).toMatchObject({ hoursFed: 0 });
    expect(lines).toEqual(['demo feed: the stored fleet is not the demo fleet; nothing is fed']);
  });
});
