// Peak memory of one full refresh of 10,000 clusters, in a fresh process, as
// deployed (the minified Lambda-style bundle on plain Node with the recompute
// worker's NODE_OPTIONS), against the memory the stack gives the recompute worker that
// runs it (infra/function-sizes.ts). Issue 21 asks for under 60%. Then the same for an
// API group's first view read, which computes the fleet view in its own container (the
// fleet group's GET /api/fleet/scores through its handler, gzipped as API Gateway gets it).
import { lambdaChild } from './lambda-child.js';
import { upsertClusters } from '../../shared/db/clusters.js';
import { putRollups } from '../../shared/db/metrics.js';
import { functionSize } from '../../infra/function-sizes.js';
import { syntheticFleet } from './synthetic-fleet.js';
import type { BenchContext } from './run.js';

export const title = 'Refresh memory (issue 21 §2): peak RSS of one refresh in a fresh process';

const CLUSTERS = 10_000;

// The child: one full refresh (read 7 days, compute, persist 3 snapshots), then its peak RSS (KB on Linux).
const CHILD = `
import { refreshFleetView } from './shared/scoring/fleet-view.ts';
const start = process.hrtime.bigint();
const view = await refreshFleetView(['fleet', 'health', 'risk']);
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
console.log(JSON.stringify({ maxRssKb: process.resourceUsage().maxRSS, scored: view.scores.length, seconds }));
`;

// The child: a new fleet container's first GET /api/fleet/scores (a viewer's token signed with the bench's key).
const FIRST_READ = `
import { userToken, useTestJwtSecret } from './test/support/tokens.ts';
import { apiEvent, lambdaContext } from './test/support/events.ts';
useTestJwtSecret();
const token = await userToken('viewer');
const { handler } = await import('./functions/fleet.ts');
const start = process.hrtime.bigint();
const res = await handler(apiEvent({ method: 'GET', path: '/api/fleet/scores', routeKey: 'GET /api/fleet/scores', headers: { authorization: 'Bearer ' + token, 'accept-encoding': 'gzip' } }), lambdaContext);
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
console.log(JSON.stringify({ maxRssKb: process.resourceUsage().maxRSS, status: res.statusCode, bytes: res.body.length, seconds }));
`;

export async function run({ report, freshTables }: BenchContext): Promise<void> {
  const refresh = await lambdaChild<{ maxRssKb: number; scored: number; seconds: number }>('refresh', CHILD, { as: 'recompute' });
  const firstRead = await lambdaChild<{ maxRssKb: number; status: number; bytes: number; seconds: number }>('fleet', FIRST_READ, { as: 'fleet' });

  await freshTables();
  const fleet = syntheticFleet(CLUSTERS, new Date());
  await upsertClusters(fleet.data.map((d) => d.cluster));
  await putRollups(fleet.rollups);

  const child = await refresh();
  const peakMb = child.maxRssKb / 1024;
  const declaredMb = functionSize('recompute')!.memoryMb;
  const share = (100 * peakMb) / declaredMb;
  report(
    'refresh memory',
    `peak RSS of one full refresh of ${CLUSTERS.toLocaleString('en-US')} clusters in a fresh process (${child.scored} scored in ${child.seconds.toFixed(1)} s), share of the recompute worker's ${declaredMb} MB`,
    `${peakMb.toFixed(0)} MB, ${share.toFixed(0)}% (target < 60%)`,
  );

  const read = await firstRead();
  if (read.status !== 200) throw new Error(`GET /api/fleet/scores answered ${read.status}`);
  const readMb = read.maxRssKb / 1024;
  const fleetMb = functionSize('fleet')!.memoryMb;
  report(
    'refresh memory',
    `peak RSS of a fleet container's first GET /api/fleet/scores (it computes the view: ${read.seconds.toFixed(1)} s, ${(read.bytes / 1024).toFixed(0)} KB of base64 gzip), share of the fleet group's ${fleetMb} MB`,
    `${readMb.toFixed(0)} MB, ${((100 * readMb) / fleetMb).toFixed(0)}% (target < 60%)`,
  );
}
