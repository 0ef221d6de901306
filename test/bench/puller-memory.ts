// Peak memory of the metrics puller's worst case (issue 21 §2: memory chosen from measured
// peaks), in a fresh process as deployed (lambda-child.ts, the worker's NODE_OPTIONS), against
// the memory the stack gives it: 10,000 clusters, and every query_range answer just under the
// 16 MB a query may have when four run at once (shared/metric-pull/pull.ts answerByteLimit),
// so 64 MB of answers are in flight whenever four metrics are. Padded labels make the
// answers that big within the points bound: the bytes bound is what holds here.
import { upsertClusters } from '../../shared/db/clusters.js';
import { METRIC_KEYS } from '../../shared/fleet/records.js';
import { answerByteLimit, metricConcurrency } from '../../shared/metric-pull/pull.js';
import { functionSize } from '../../infra/function-sizes.js';
import { useMetricSources } from '../support/metric-sources.js';
import { lambdaChild } from './lambda-child.js';
import { startScriptServer, withStdinInput } from './script-server.js';
import { syntheticFleet } from './synthetic-fleet.js';
import type { BenchContext } from './run.js';

export const title = 'Metrics puller memory (issue 21 §2): peak RSS of a pull whose every answer is near its byte limit, in a fresh process';

const CLUSTERS = 10_000;
/** An hour a step over the day's backfill: two query_range calls per metric and window at 10,000 series. */
const STEP = 3_600;
const MAX_POINTS = 200_000;
/** Each answer's target size: just under the limit, which would refuse it. */
const TARGET_BYTES = answerByteLimit(MAX_POINTS) - 256 * 1024;

// The child: one pull at the given time, then its peak RSS (KB on Linux).
const PULL_CHILD = `
import { peakRssKb } from './test/bench/peak-rss.ts';
import { pullMetrics } from './shared/metric-pull/pull.ts';
const start = process.hrtime.bigint();
const result = await pullMetrics({ now: new Date(Number(process.env.PULL_NOW_MS)), sleep: async () => {} });
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
console.log(JSON.stringify({ maxRssKb: peakRssKb(), outcome: result.outcome, accepted: result.accepted, refused: result.refused, errors: result.metrics.filter((m) => m.error).map((m) => m.error), seconds }));
`;

/**
 * Answers query_range with a series per cluster at every step asked, each series' labels padded so
 * the answer is `target` bytes (within a few hundred); counts the answers and their bytes. A child
 * process, so that building its answers costs the measured puller nothing.
 */
const STUB = withStdinInput(`
const { createServer } = require('node:http');
const { ids, target } = input;
let answers = 0, bytes = 0, largest = 0;
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.url === '/stats') return res.end(JSON.stringify({ answers, bytes, largest }));
    const form = new URLSearchParams(Buffer.concat(chunks).toString());
    const [from, to, every] = ['start', 'end', 'step'].map((k) => Number(form.get(k)));
    const values = [];
    for (let t = from; t <= to; t += every) values.push('[' + t + ',"' + (40 + (t / every) % 50).toFixed(3) + '"]');
    const points = '],"values":[' + values.join(',') + ']}';
    const bare = (id) => '{"metric":{"cluster_id":"' + id + '","pad":"';
    const fixed = ids.reduce((n, id) => n + bare(id).length + 2 + points.length, 0) + 80;
    const pad = 'x'.repeat(Math.max(0, Math.floor((target - fixed) / ids.length)));
    const body = '{"status":"success","data":{"resultType":"matrix","result":[' + ids.map((id) => bare(id) + pad + '"}' + points.slice(1)).join(',') + ']}}';
    answers++; bytes += body.length; largest = Math.max(largest, body.length);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`);

async function startStub(ids: readonly string[]) {
  const server = await startScriptServer('puller-memory', STUB, { ids, target: TARGET_BYTES });
  return { ...server, stats: async () => (await (await fetch(`${server.url}/stats`)).json()) as { answers: number; bytes: number; largest: number } };
}

export async function run({ report, freshTables }: BenchContext): Promise<void> {
  const pull = await lambdaChild<{ maxRssKb: number; outcome: string; accepted: number; refused: number; errors: string[]; seconds: number }>(
    'metrics-puller',
    PULL_CHILD,
    { as: 'metrics-puller' },
  );
  await freshTables();
  const now = new Date();
  const fleet = syntheticFleet(CLUSTERS, now, 1);
  const ids = fleet.data.map((d) => d.cluster.cluster_id);
  await upsertClusters(fleet.data.map((d) => d.cluster));
  const stub = await startStub(ids);
  try {
    await useMetricSources({
      url: stub.url,
      timeoutSeconds: 120,
      stepSeconds: STEP,
      maxPointsPerRequest: MAX_POINTS,
      metrics: METRIC_KEYS.map((key) => ({ key, query: `max by (cluster_id) (bench_${key})` })),
    });
    const child = await pull({ PULL_NOW_MS: String(now.getTime()) });
    if (child.outcome !== 'ok' || child.accepted === 0)
      throw new Error(`puller-memory: the pull ended ${child.outcome} with ${child.accepted} points accepted: ${child.errors.join('; ')}`);
    const { answers, bytes, largest } = await stub.stats();
    const peakMb = child.maxRssKb / 1024;
    const declaredMb = functionSize('metrics-puller')!.memoryMb;
    report(
      'puller memory',
      `peak RSS of a pull of ${CLUSTERS.toLocaleString('en-US')} clusters × ${METRIC_KEYS.length} metrics, a day at ${STEP / 60} min, in a fresh process: ${answers} answers of up to ${(largest / 2 ** 20).toFixed(1)} MB (limit ${answerByteLimit(MAX_POINTS) / 2 ** 20} MB, ${metricConcurrency(MAX_POINTS)} at once; ${(bytes / 2 ** 20).toFixed(0)} MB in all), ${child.accepted.toLocaleString('en-US')} points in ${child.seconds.toFixed(1)} s; share of the worker's ${declaredMb} MB`,
      `${peakMb.toFixed(0)} MB, ${((100 * peakMb) / declaredMb).toFixed(0)}%`,
    );
  } finally {
    await stub.close();
  }
}
