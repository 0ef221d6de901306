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
export const REFRESH_CHILD = `
import { peakRssKb } from './test/bench/peak-rss.ts';
import { refreshFleetView } from './shared/scoring/fleet-view.ts';
const start = process.hrtime.bigint();
const view = await refreshFleetView(['fleet', 'health', 'risk']);
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
console.log(JSON.stringify({ maxRssKb: peakRssKb(), scored: view.scores.length, seconds }));
`;

// The children: a new container's first request of each kind that computes the fleet view, through the
// group's handler (tokens signed with the bench's key): the fleet scores a viewer reads, the Prometheus
// scrape, and a pending health-rules proposal's detail, whose impact scores the fleet twice.
const firstRequest = (group: string, request: string) => `
import { peakRssKb } from './test/bench/peak-rss.ts';
import { userToken, useTestJwtSecret } from './test/support/tokens.ts';
import { apiEvent, lambdaContext } from './test/support/events.ts';
import { defaultRuleText } from './shared/rules/defaults.ts';
useTestJwtSecret();
const { handler } = await import('./functions/${group}.ts');
const send = async (method, path, routeKey, token, body, params) => {
  const res = await handler(apiEvent({ method, path, routeKey, body, params, headers: { authorization: 'Bearer ' + token, 'accept-encoding': 'gzip' } }), lambdaContext);
  if (res.statusCode !== 200) throw new Error(method + ' ' + path + ' answered ' + res.statusCode + ': ' + res.body);
  return res;
};
${request}
const start = process.hrtime.bigint();
const res = await read();
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
console.log(JSON.stringify({ maxRssKb: peakRssKb(), bytes: res.body.length, seconds }));
`;

/** Each first request: what it is, the group whose container serves it, and the child's code before the read. */
const FIRST_REQUESTS = [
  {
    what: 'GET /api/fleet/scores',
    group: 'fleet',
    request: `const viewer = await userToken('viewer');
const read = () => send('GET', '/api/fleet/scores', 'GET /api/fleet/scores', viewer);`,
  },
  {
    what: 'GET /api/metrics (the scrape)',
    group: 'metrics',
    request: `const read = () => send('GET', '/api/metrics', 'GET /api/metrics', process.env.SCRAPE_TOKEN);`,
  },
  {
    what: 'GET /api/settings/config-changes/{id} (a health-rules proposal, with its impact)',
    group: 'settings',
    request: `const admin = await userToken('admin');
const content = defaultRuleText('health-rules').replace('healthy: 80 ', 'healthy: 85 ');
const put = await send('PUT', '/api/settings/health-rules', 'PUT /api/settings/health-rules', admin, JSON.stringify({ content }));
const { change_id } = JSON.parse(put.body);
const read = () => send('GET', '/api/settings/config-changes/' + change_id, 'GET /api/settings/config-changes/{change_id}', admin, undefined, { change_id });`,
  },
];

export async function run({ report, freshTables }: BenchContext): Promise<void> {
  const refresh = await lambdaChild<{ maxRssKb: number; scored: number; seconds: number }>('refresh', REFRESH_CHILD, { as: 'recompute' });
  const firstReads = await Promise.all(
    FIRST_REQUESTS.map(async ({ what, group, request }) => ({
      what,
      group,
      run: await lambdaChild<{ maxRssKb: number; bytes: number; seconds: number }>(group, firstRequest(group, request), { as: group }),
    })),
  );

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

  for (const { what, group, run: firstRead } of firstReads) {
    const read = await firstRead({ SCRAPE_TOKEN: 'bench-scrape-token-0123456789abcdef' });
    const readMb = read.maxRssKb / 1024;
    const groupMb = functionSize(group)!.memoryMb;
    report(
      'refresh memory',
      `peak RSS of a new ${group} container's first ${what}: it computes the view (${read.seconds.toFixed(1)} s, ${(read.bytes / 1024).toFixed(0)} KB of base64 gzip), share of the group's ${groupMb} MB`,
      `${readMb.toFixed(0)} MB, ${((100 * readMb) / groupMb).toFixed(0)}% (target < 60%)`,
    );
  }
}
