// The metrics puller (issue 20) at fleet size: 1,000 clusters × the 13 metric
// keys × 1 day at a 5-minute step (3,744,000 points), first from a real
// Prometheus (Debian's, backfilled by promtool; test/support/prometheus.ts),
// then from a stub that answers /api/v1/query_range from the same values with
// no PromQL evaluation, so the difference is Prometheus' own share. Both pulls
// write to DynamoDB Local. The first pull backfills the day; the second, 5
// minutes later, is the steady-state cost of one scheduled run.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { demoClusters } from '../../infra/local/demo-fleet.js';
import { windowDays } from '../../shared/db/days.js';
import { readFleetRollups } from '../../shared/db/metrics.js';
import { ingestClusters } from '../../shared/fleet/ingest.js';
import { METRIC_KEYS } from '../../shared/fleet/records.js';
import { pullMetrics, type PullResult } from '../../shared/metric-pull/pull.js';
import { useMetricSources } from '../support/metric-sources.js';
import { openMetrics, startPrometheus, type HistorySeries, type RunningPrometheus } from '../support/prometheus.js';
import type { BenchContext } from './run.js';
import { startScriptServer, withStdinInput } from './script-server.js';

export const title = 'Metrics puller (issue 20): 1,000 clusters × 13 metrics × 1 day at a 5-minute step';

const CLUSTERS = 1_000;
const STEP = 300;
const SAMPLES = 288; // one day
const noWait = async () => {};

/** The last sample, on the step grid, ten minutes ago (backfilled history must end before now). */
const END = Math.floor(Date.now() / 1000 / STEP) * STEP - 2 * STEP;
const FIRST = END - (SAMPLES - 1) * STEP;
const EXPECTED = CLUSTERS * METRIC_KEYS.length * SAMPLES;

/** A short, deterministic value per (cluster, metric, step). */
function sampleValue(cluster: number, metric: number, step: number): number {
  return ((cluster * 31 + metric * 17 + step * 7) % 1000) / 10;
}

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const seconds = (milliseconds: number) => `${(milliseconds / 1000).toFixed(1)} s`;
const n = (value: number) => value.toLocaleString('en-US');

/** Fresh tables holding the 1,000 clusters and a metric-sources version pointing at `url`. */
async function prepare(freshTables: BenchContext['freshTables'], ids: readonly string[], url: string): Promise<void> {
  await freshTables();
  const inventory = demoClusters(CLUSTERS, 20).map((c, i) => ({ ...c.inventory, cluster_id: ids[i]! }));
  const ingested = await ingestClusters(inventory);
  if (ingested.accepted !== CLUSTERS) throw new Error(`metric-pull: ${ingested.accepted} clusters ingested, not ${CLUSTERS}`);
  await useMetricSources({
    url,
    timeoutSeconds: 120,
    stepSeconds: STEP,
    metrics: METRIC_KEYS.map((key) => ({ key, query: `max by (cluster_id) (last_over_time(bench_${key}[${STEP - 1}s]))` })),
  });
}

interface Measured {
  result: PullResult;
  ms: number;
  /** This process' CPU time (user + system) during the pull: the puller's own work, DynamoDB's client included. */
  cpuMs: number;
  /** The most JavaScript memory (heap + buffers) in use during the pull beyond what was live before it, garbage not yet collected included. */
  heapDeltaMb: number;
  /** The process' largest resident set during the pull (V8 keeps freed pages, so a delta of it says little). */
  peakRssMb: number;
}

/** Full garbage collections, so that the memory in use before a pull is what is live. */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const inUse = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.external + m.arrayBuffers;
};

/** One pull at `nowSeconds`, timed, with the process' memory sampled every 20 ms. */
async function measuredPull(nowSeconds: number): Promise<Measured> {
  // Buffers are released just after the collection that finds them unreachable: collect twice.
  collectGarbage();
  await new Promise((resolve) => setTimeout(resolve, 200));
  collectGarbage();
  // The lowest reading is the baseline, should the setup's garbage still be freed during the pull.
  let low = inUse();
  let high = low;
  let peakRss = process.memoryUsage.rss();
  const sample = () => {
    const now = inUse();
    low = Math.min(low, now);
    high = Math.max(high, now);
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  };
  const sampler = setInterval(sample, 20);
  const start = process.hrtime.bigint();
  const cpuBefore = process.cpuUsage();
  try {
    const result = await pullMetrics({ now: new Date(nowSeconds * 1000), sleep: noWait });
    const elapsed = ms(start);
    const cpu = process.cpuUsage(cpuBefore);
    sample();
    if (result.outcome !== 'ok') throw new Error(`metric-pull: outcome ${result.outcome}: ${JSON.stringify(result.metrics.find((m) => m.error))}`);
    const mb = (bytes: number) => bytes / 1024 / 1024;
    return { result, ms: elapsed, cpuMs: (cpu.user + cpu.system) / 1000, heapDeltaMb: mb(high - low), peakRssMb: mb(peakRss) };
  } finally {
    clearInterval(sampler);
  }
}

/** The first pull (the day's backfill) and the next, 5 minutes later; throws unless every point arrived. */
async function pullBoth(report: BenchContext['report'], label: string): Promise<void> {
  const first = await measuredPull(END);
  if (first.result.accepted !== EXPECTED || first.result.refused !== 0)
    throw new Error(`metric-pull (${label}): accepted ${first.result.accepted} / refused ${first.result.refused}, expected ${EXPECTED} / 0`);
  // Each window writes one cluster-day item per cluster, all metrics together.
  const windows = first.result.metrics[0]!.windows;
  const stored = [...(await readFleetRollups(windowDays(2, new Date(END * 1000)))).values()].reduce((sum, list) => sum + list.length, 0);
  report(
    'metric-pull',
    `${label}: first pull, backfilling 1 day (${n(first.result.accepted)} points accepted, ${n(windows * CLUSTERS)} rollup writes in ${windows} windows, ${n(stored)} cluster-days stored)`,
    `${seconds(first.ms)} (${n(Math.round(first.result.accepted / (first.ms / 1000)))} points/s; this process' CPU ${seconds(first.cpuMs)}), memory in use +${first.heapDeltaMb.toFixed(0)} MB at most (RSS ${first.peakRssMb.toFixed(0)} MB)`,
  );
  const next = await measuredPull(END + STEP);
  if (next.result.accepted !== 0) throw new Error(`metric-pull (${label}): the next pull accepted ${next.result.accepted}, expected 0 (no newer data)`);
  report('metric-pull', `${label}: next pull 5 minutes later (one empty step per metric)`, `${next.ms.toFixed(0)} ms (CPU ${next.cpuMs.toFixed(0)} ms)`);
}

/**
 * Answers query_range as Prometheus would for these queries over this history, without evaluating
 * PromQL: every series' points at the steps asked that hold a sample. A child process, so that
 * writing its answers costs this process (whose CPU and memory are measured) nothing.
 */
const STUB = withStdinInput(`
const { createServer } = require('node:http');
const { ids, keys, first, end, step } = input;
const sampleValue = ${sampleValue.toString()};
let requests = 0;
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    requests++;
    const form = new URLSearchParams(Buffer.concat(chunks).toString());
    const metric = keys.indexOf((/bench_(\\w+)\\[/.exec(form.get('query') || '') || [])[1]);
    const [from, to, every] = ['start', 'end', 'step'].map((k) => Number(form.get(k)));
    if (req.url === '/requests') return res.end(String(requests - 1));
    if (req.url !== '/api/v1/query_range' || metric < 0 || !(from <= to) || !(every > 0)) {
      res.writeHead(400, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'not a bench query' }));
    }
    const steps = [];
    for (let t = from; t <= to; t += every) if (t >= first && t <= end && (t - first) % step === 0) steps.push(t);
    const series = steps.length === 0 ? [] : ids.map((id, c) =>
      '{"metric":{"cluster_id":"' + id + '"},"values":[' + steps.map((t) => '[' + t + ',"' + sampleValue(c, metric, (t - first) / step) + '"]').join(',') + ']}');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"success","data":{"resultType":"matrix","result":[' + series.join(',') + ']}}');
  });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`);

async function startStub(ids: readonly string[]): Promise<{ url: string; requests(): Promise<number>; close(): Promise<void> }> {
  const server = await startScriptServer('metric-pull', STUB, { ids, keys: METRIC_KEYS, first: FIRST, end: END, step: STEP });
  return { ...server, requests: async () => Number(await (await fetch(`${server.url}/requests`)).text()) };
}

/** A real Prometheus backfilled with the day (the OpenMetrics text is dropped once promtool has read it). */
async function loadedPrometheus(report: BenchContext['report'], ids: readonly string[]): Promise<RunningPrometheus> {
  let start = process.hrtime.bigint();
  const series: HistorySeries[] = [];
  METRIC_KEYS.forEach((key, mi) => {
    ids.forEach((id, ci) => {
      const samples: [number, number][] = [];
      for (let s = 0; s < SAMPLES; s++) samples.push([(FIRST + s * STEP) * 1000, sampleValue(ci, mi, s)]);
      series.push({ name: `bench_${key}`, labels: { cluster_id: id }, samples });
    });
  });
  const history = openMetrics(series);
  const generated = ms(start);
  start = process.hrtime.bigint();
  const prometheus = await startPrometheus({ history, startTimeoutMs: 300_000 });
  report(
    'metric-pull',
    `setup: the ${n(EXPECTED)} samples as OpenMetrics text (${(Buffer.byteLength(history) / 1024 / 1024).toFixed(0)} MB) / promtool backfill + Prometheus ready`,
    `${seconds(generated)} / ${seconds(ms(start))}`,
  );
  return prometheus;
}

export async function run({ report, freshTables }: BenchContext): Promise<void> {
  const ids = demoClusters(CLUSTERS, 20).map((c) => c.inventory.cluster_id);

  const prometheus = await loadedPrometheus(report, ids);
  try {
    await prepare(freshTables, ids, prometheus.url);
    await pullBoth(report, 'Prometheus 2.42');
  } finally {
    await prometheus.stop();
  }

  const stub = await startStub(ids);
  try {
    await prepare(freshTables, ids, stub.url);
    await pullBoth(report, 'stub query_range server, no PromQL evaluation');
    report('metric-pull', 'query_range requests, first + next pull (≤ 200,000 points each)', String(await stub.requests()));
  } finally {
    await stub.close();
  }
}
