// Fleet data: ingest throughput and the fleet-wide 14-day rollup read that every
// score computation starts with.
import { demoClusters, demoSamples } from '../../infra/local/demo-fleet.js';
import { windowDays } from '../../shared/db/days.js';
import { readFleetRollups, putRollups, type StoredRollup } from '../../shared/db/metrics.js';
import { ingestClusters, ingestMetrics } from '../../shared/fleet/ingest.js';
import { mergeSample, type DayRollup } from '../../shared/fleet/rollup.js';
import { clearPackCache, PACK_BUILDER } from '../../shared/db/packing.js';
import { readFleetRollupColumns } from '../../shared/db/rollup-packs.js';
import type { MetricSample } from '../../shared/fleet/records.js';

export const title = 'Fleet data (DESIGN §9): ingest and rollup reads';

import type { BenchContext } from './run.js';

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

export async function run({ report, freshTables }: BenchContext): Promise<void> {
  const now = new Date();

  // Ingest: 100 clusters × 2 days of hourly samples (62,400), 5,000 per request as a client sends them.
  const fleet = demoClusters(100, 1);
  await ingestClusters(
    fleet.map((c) => c.inventory),
    now,
  );
  const samples: MetricSample[] = fleet.flatMap((c) => [...demoSamples(c, 2, now, 1)]);
  for (const clients of [1, 4]) {
    const batches: MetricSample[][] = [];
    for (let i = 0; i < samples.length; i += 5000) batches.push(samples.slice(i, i + 5000));
    const start = process.hrtime.bigint();
    let next = 0;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (next < batches.length) await ingestMetrics(batches[next++]!, now);
      }),
    );
    const elapsed = ms(start);
    report(
      'ingest',
      `samples/s, ${clients} client${clients > 1 ? 's' : ''} (${samples.length} samples, 5,000 per request)`,
      `${Math.round(samples.length / (elapsed / 1000)).toLocaleString('en-US')}`,
    );
  }

  // Reads: 14 days of rollups (13 metric keys each) for 1,000 and then 10,000 clusters.
  await freshTables();
  const days = windowDays(14, now);
  const template: DayRollup = {};
  for (const s of demoSamples(fleet[0]!, 1, now, 1)) mergeSample(template, s);
  let loaded = 0;
  for (const total of [1_000, 10_000]) {
    const ids = demoClusters(total, 99)
      .slice(loaded)
      .map((c) => c.inventory.cluster_id);
    const rollups: StoredRollup[] = ids.flatMap((cluster_id) => days.map((day) => ({ cluster_id, day, metrics: template })));
    const seedStart = process.hrtime.bigint();
    await putRollups(rollups);
    loaded = total;
    const seeded = ms(seedStart);
    const timings: number[] = [];
    let clusters = 0;
    for (let i = 0; i < 3; i++) {
      const start = process.hrtime.bigint();
      clusters = (await readFleetRollups(days)).size;
      timings.push(ms(start));
    }
    report(
      'rollup read',
      `14-day rollup of ${total.toLocaleString('en-US')} clusters (${(total * 14).toLocaleString('en-US')} items), best of 3`,
      `${Math.min(...timings).toFixed(0)} ms (${clusters} clusters read)`,
    );
    report('rollup read', `bulk load of ${(rollups.length).toLocaleString('en-US')} rollup items`, `${seeded.toFixed(0)} ms`);

    // The same window through packed rollups (shared/db/rollup-packs.ts), read as the refresh does: the first read packs the settled
    // days (today's, and yesterday's before 02:00 UTC, stay items), then a fresh container (no decoded pack
    // cached) and a warm one (only write counters and heads read again, and the open days' items).
    clearPackCache();
    let start = process.hrtime.bigint();
    await readFleetRollupColumns(days, now, { build: PACK_BUILDER });
    const first = ms(start);
    const cold: number[] = [];
    const warm: number[] = [];
    for (let i = 0; i < 3; i++) {
      clearPackCache();
      start = process.hrtime.bigint();
      await readFleetRollupColumns(days, now, { build: PACK_BUILDER });
      cold.push(ms(start));
      start = process.hrtime.bigint();
      await readFleetRollupColumns(days, now, { build: PACK_BUILDER });
      warm.push(ms(start));
    }
    report(
      'rollup read',
      `the same through packed rollups: first read (packs the settled days) / fresh container / warm container, best of 3`,
      `${first.toFixed(0)} / ${Math.min(...cold).toFixed(0)} / ${Math.min(...warm).toFixed(0)} ms`,
    );
  }
}
