// Peak memory of the chat assistant's SQL snapshot of 10,000 clusters (run_sql's first
// question: the fleet view, 14 days of rollups, alerts and issues, loaded into SQLite in
// its worker thread), in a fresh process as deployed (the minified bundle with the SQL
// worker and SQLite's WebAssembly beside it, on plain Node with the chat group's
// NODE_OPTIONS), against the memory the stack gives the chat route group
// (infra/function-sizes.ts). The scheduled run comes first, as on AWS: a refresh
// writes the snapshots the fleet view reads and packs the lookback's days, then
// the other settled days of the snapshot's 14 are packed (packSettledDays).
import { functionSize } from '../../infra/function-sizes.js';
import { SQL_ROLLUP_DAYS } from '../../shared/chat/sql-snapshot.js';
import { upsertClusters } from '../../shared/db/clusters.js';
import { windowDays } from '../../shared/db/days.js';
import { putRollups } from '../../shared/db/metrics.js';
import { PACK_BUILDER } from '../../shared/db/packing.js';
import { packSettledDays } from '../../shared/db/rollup-packs.js';
import { lambdaChild } from './lambda-child.js';
import { REFRESH_CHILD } from './refresh-memory.js';
import type { BenchContext } from './run.js';
import { syntheticFleet } from './synthetic-fleet.js';

export const title = 'Chat memory (issue 21): peak RSS of the run_sql snapshot of 10,000 clusters in a fresh process';

const CLUSTERS = 10_000;
const DAYS = SQL_ROLLUP_DAYS;

// The child: open the snapshot as the first chat message does (the tools' schema text), then a first
// query (waits for the load), then a fleet-wide one, then its peak RSS (KB on Linux).
const CHAT = `
import { peakRssKb } from './test/bench/peak-rss.ts';
import { fleetDatabase } from './shared/chat/tools.ts';
const start = process.hrtime.bigint();
const since = () => Number(process.hrtime.bigint() - start) / 1e9;
const db = await fleetDatabase();
const schemaSeconds = since();
const rows = (await db.query('SELECT count(*) FROM metric_daily')).rows[0][0];
const seconds = since();
const fleetWide = await db.query('SELECT metric_key, max(max), avg(avg) FROM metric_daily GROUP BY metric_key');
await db.close();
console.log(JSON.stringify({ maxRssKb: peakRssKb(), rows, schemaSeconds, seconds, fleetWideMs: fleetWide.duration_ms }));
`;

export async function run({ report }: BenchContext): Promise<void> {
  const refresh = await lambdaChild('refresh', REFRESH_CHILD, { as: 'recompute' });
  const chat = await lambdaChild<{ maxRssKb: number; rows: number; schemaSeconds: number; seconds: number; fleetWideMs: number }>('chat', CHAT, { as: 'chat' });

  const fleet = syntheticFleet(CLUSTERS, new Date(), DAYS);
  await upsertClusters(fleet.data.map((d) => d.cluster));
  await putRollups(fleet.rollups);
  await refresh();
  const now = new Date();
  await packSettledDays(windowDays(DAYS, now), now, PACK_BUILDER);

  const child = await chat();
  const peakMb = child.maxRssKb / 1024;
  const declaredMb = functionSize('chat')!.memoryMb;
  report(
    'chat memory',
    `run_sql's snapshot of ${CLUSTERS.toLocaleString('en-US')} clusters × ${DAYS} days (${child.rows.toLocaleString('en-US')} metric_daily rows) in a fresh process: its schema text (the model's first call can start) / loaded (the first query answered) / a fleet-wide query (GROUP BY metric_key)`,
    `${child.schemaSeconds.toFixed(1)} s / ${child.seconds.toFixed(1)} s / ${child.fleetWideMs.toFixed(0)} ms`,
  );
  report(
    'chat memory',
    `its peak RSS, share of the chat group's ${declaredMb} MB`,
    `${peakMb.toFixed(0)} MB, ${((100 * peakMb) / declaredMb).toFixed(0)}% (target < 60%)`,
  );
}
