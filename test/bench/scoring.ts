// Scoring: a full refresh through DynamoDB Local against the floor of its own
// work, and the cached GET /api/fleet/scores through the local server.
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { lambdaChild } from './lambda-child.js';
import { ensureNode, RUNTIME_NODE_VERSION } from './lambda-runtime.js';
import { startBenchService } from './service.js';
import { upsertClusters } from '../../shared/db/clusters.js';
import { putRollups } from '../../shared/db/metrics.js';
import { dropFleetViewCache, refreshFleetView } from '../../shared/scoring/fleet-view.js';
import { syntheticFleet } from './synthetic-fleet.js';
import { startWireCapture } from './wire-capture.js';
import type { BenchContext } from './run.js';

export const title = 'Scoring (DESIGN §8): refresh against its floor, and cached reads';

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

/**
 * One refresh in a fresh process, as deployed (the minified Lambda-style bundle, the
 * recompute worker's NODE_OPTIONS): what the recompute worker does in a new container. Then, on
 * that run's own data, the rest of the floor: computing every view again from the
 * inputs in memory, and serialising the three snapshots.
 */
const CHILD = `
import { computeViews, refreshFleetView } from './shared/scoring/fleet-view.ts';
const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;
// Pages the process touches for the first time (minor faults): what a fresh process pays and a warm one does not.
const faults = () => process.resourceUsage().minorPageFault;
let start = process.hrtime.bigint();
let faulted = faults();
const view = await refreshFleetView(['fleet', 'health', 'risk']);
const refreshMs = ms(start);
const refreshFaults = faults() - faulted;
// The same container's next refresh: decoded packs cached, only their write counters read again
// (skipped by the capture run, whose wire must be the first refresh's alone).
start = process.hrtime.bigint();
faulted = faults();
if (process.env.BENCH_SECOND_REFRESH !== 'no') await refreshFleetView(['fleet', 'health', 'risk']);
const warmMs = ms(start);
const warmFaults = faults() - faulted;
const score = [];
for (let i = 0; i < 3; i++) {
  start = process.hrtime.bigint();
  computeViews(view.fleet, view.health, view.risk, view.now);
  score.push(ms(start));
}
start = process.hrtime.bigint();
const bytes = [view.scores, view.healthScores, view.snapshots].reduce((n, list) => n + JSON.stringify(list).length, 0);
const stringifyMs = ms(start);
console.log(JSON.stringify({ refreshMs, refreshFaults, warmMs, warmFaults, scoreMs: Math.min(...score), stringifyMs, bytes, scored: view.scores.length }));
// The refresh's own inputs, for the floor in a fresh process (COLD_FLOOR_CHILD): what the fold and the
// scoring read, taken apart from the per-cluster objects (their rollups getter refuses windowed columns).
if (process.env.BENCH_INPUTS) {
  const { writeFileSync } = await import('node:fs');
  const { serialize } = await import('node:v8');
  const columns = view.fleet[0]?.columns;
  if (view.fleet.some((d) => d.columns !== columns)) throw new Error('the fleet does not share one set of rollup columns');
  const inputs = { clusters: view.fleet.map((d) => d.cluster), alerts: view.fleet.map((d) => d.alerts), columns, health: view.health, risk: view.risk, now: view.now };
  writeFileSync(process.env.BENCH_INPUTS, serialize(inputs));
}
`;

/**
 * The floor's compute and stringify as a fresh process first runs them (V8 has optimised nothing
 * yet), on the inputs a refresh wrote (BENCH_INPUTS): the part of a fresh refresh's distance
 * from the floor that is V8 tiering up rather than the data path. Rebuilding the inputs is not timed.
 */
const COLD_FLOOR_CHILD = `
import { readFileSync } from 'node:fs';
import { deserialize } from 'node:v8';
import { computeViews } from './shared/scoring/fleet-view.ts';
import { columnarClusterData } from './shared/scoring/inputs.ts';
const { clusters, alerts, columns, health, risk, now } = deserialize(readFileSync(process.env.BENCH_INPUTS));
const fleet = clusters.map((cluster, i) => columnarClusterData(cluster, columns, alerts[i]));
const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;
let start = process.hrtime.bigint();
const view = computeViews(fleet, health, risk, now);
const scoreMs = ms(start);
start = process.hrtime.bigint();
for (const list of [view.scores, view.healthScores, view.snapshots]) JSON.stringify(list);
console.log(JSON.stringify({ scoreMs, stringifyMs: ms(start) }));
`;

interface ChildRun {
  refreshMs: number;
  /** Minor page faults during the refresh: 4 KB pages the process touched for the first time. */
  refreshFaults: number;
  warmMs: number;
  warmFaults: number;
  scoreMs: number;
  stringifyMs: number;
  bytes: number;
  scored: number;
}

/** Parsing captured wire bodies (wire-capture.ts parseWire) in a fresh process of a given Node: best of 3. */
const PARSE_CHILD = `
import { readFileSync } from 'node:fs';
import { parseWire } from './test/bench/wire-capture.ts';
const file = readFileSync(process.env.BENCH_BODIES);
const bodies = [];
for (let at = 0; at < file.length; at += 4 + file.readUInt32LE(at)) bodies.push(file.subarray(at + 4, at + 4 + file.readUInt32LE(at)));
const first = parseWire(bodies);
console.log(JSON.stringify({ firstMs: first, parseMs: Math.min(first, parseWire(bodies), parseWire(bodies)) }));
`;

/**
 * What touching fresh memory costs on this machine: 64 MB written for the first time (each 4 KB page a
 * minor fault the kernel fills), then again (no fault). Best of 3 fresh processes.
 */
const FIRST_TOUCH_CHILD = `
const faults = () => process.resourceUsage().minorPageFault;
const memory = new Float64Array(8 << 20);
let before = faults();
let start = process.hrtime.bigint();
memory.fill(1);
const firstMs = Number(process.hrtime.bigint() - start) / 1e6;
const pages = faults() - before;
start = process.hrtime.bigint();
memory.fill(2);
console.log(JSON.stringify({ firstMs, againMs: Number(process.hrtime.bigint() - start) / 1e6, pages }));
`;

/** Fresh processes timed per Node: the first also warms DynamoDB Local's JVM for the reads after the bulk load. */
const RUNS = 3;

export async function run({ report, freshTables }: BenchContext): Promise<void> {
  const now = new Date();
  // Each with the recompute worker's Node options: the refresh is its work, the floor the same work without the data path.
  const recompute = { as: 'recompute' };
  const refresh = await lambdaChild<ChildRun>('refresh', CHILD, recompute);
  const parseOn = await lambdaChild<{ firstMs: number; parseMs: number }>('parse', PARSE_CHILD, recompute);
  const coldFloor = await lambdaChild<{ scoreMs: number; stringifyMs: number }>('cold-floor', COLD_FLOOR_CHILD, recompute);
  const firstTouch = await lambdaChild<{ firstMs: number; againMs: number; pages: number }>('first-touch', FIRST_TOUCH_CHILD, recompute);
  const touches = [await firstTouch(), await firstTouch(), await firstTouch()].sort((a, b) => a.firstMs - b.firstMs)[0]!;
  const usPerFault = (touches.firstMs * 1000) / Math.max(1, touches.pages);
  report(
    'refresh',
    'what a page touched for the first time costs on this machine (64 MB written into a fresh process, then again; best of 3): the part of a fresh refresh a warm process does not pay',
    `${touches.firstMs.toFixed(0)} ms for ${touches.pages.toLocaleString('en-US')} minor faults (${usPerFault.toFixed(1)} µs per 4 KB page), against ${touches.againMs.toFixed(1)} ms written again`,
  );
  const child = (endpoint: string, node?: string, secondRefresh = true, inputs?: string) =>
    refresh({ AWS_ENDPOINT_URL_DYNAMODB: endpoint, BENCH_SECOND_REFRESH: secondRefresh ? 'yes' : 'no', ...(inputs ? { BENCH_INPUTS: inputs } : {}) }, node);
  // This machine's Node, and the one Lambda's nodejs22.x runs the recompute worker on.
  const nodes = [
    { label: `Node ${process.versions.node}`, binary: process.execPath },
    { label: `Node ${RUNTIME_NODE_VERSION} (Lambda's)`, binary: await ensureNode() },
  ];
  const work = await mkdtemp(join(tmpdir(), 'fleet-scoring-'));

  for (const total of [1_000, 10_000]) {
    await freshTables();
    const fleet = syntheticFleet(total, now);
    await upsertClusters(fleet.data.map((d) => d.cluster));
    await putRollups(fleet.rollups);
    const clusters = total.toLocaleString('en-US');

    // The first refresh after a bulk load reads every rollup item and packs the settled days (shared/db/rollup-packs.ts).
    dropFleetViewCache();
    const start = process.hrtime.bigint();
    await refreshFleetView(['fleet', 'health', 'risk']);
    report(
      'refresh',
      `${clusters} clusters, the first refresh after a bulk load of 7 days (reads the items, writes the packs of settled days)`,
      `${(ms(start) / 1000).toFixed(2)} s`,
    );

    // The wire: the same refresh once through a recording proxy, whose bodies are what a refresh must parse.
    const capture = await startWireCapture(process.env.AWS_ENDPOINT_URL_DYNAMODB!);
    const inputsFile = join(work, `inputs-${total}.v8`);
    let bodies: Buffer[];
    try {
      await child(capture.endpoint, undefined, false, inputsFile);
      bodies = capture.take();
    } finally {
      await capture.close();
    }
    const wireMb = bodies.reduce((n, b) => n + b.length, 0) / 1e6;
    const bodiesFile = join(work, `bodies-${total}`);
    writeFileSync(bodiesFile, Buffer.concat(bodies.flatMap((body) => [Buffer.from(Uint32Array.of(body.length).buffer), body])));

    // Fresh processes (new recompute containers) timed straight against DynamoDB Local; the floor's
    // compute and stringify are theirs (best of the runs), its parse the captured wire's on the same Node.
    for (const node of nodes) {
      const timed: ChildRun[] = [];
      for (let i = 0; i < RUNS; i++) timed.push(await child(process.env.AWS_ENDPOINT_URL_DYNAMODB!, node.binary));
      const { parseMs: parse, firstMs: firstParse } = await parseOn({ BENCH_BODIES: bodiesFile }, node.binary);
      const [scoreMs, stringifyMs] = [Math.min(...timed.map((t) => t.scoreMs)), Math.min(...timed.map((t) => t.stringifyMs))];
      const floor = parse + scoreMs + stringifyMs;
      const best = timed.reduce((a, b) => (b.refreshMs < a.refreshMs ? b : a));
      const fresh = best.refreshMs;
      report(
        'refresh',
        `${clusters} clusters, ${node.label}: full refresh in a fresh process (read 7 days, compute, persist 3 snapshots), best of ${RUNS} / its floor: parse the ${wireMb.toFixed(1)} MB it received + compute every view + stringify the ${(timed[0]!.bytes / 1e6).toFixed(1)} MB of snapshots`,
        `${(fresh / 1000).toFixed(2)} s / ${(floor / 1000).toFixed(2)} s (${parse.toFixed(0)} + ${scoreMs.toFixed(0)} + ${stringifyMs.toFixed(0)} ms) = ${(fresh / floor).toFixed(2)}× (target ≤ 2.5×)`,
      );
      // The pages it touched first, at this machine's price per page (a warm process touches few).
      const warmRun = timed.reduce((a, b) => (b.warmMs < a.warmMs ? b : a));
      report(
        'refresh',
        `${clusters} clusters, ${node.label}: pages the fresh refresh above touched for the first time (minor faults, MB), and what they cost at the price measured above; the next refresh's`,
        `${best.refreshFaults.toLocaleString('en-US')} (${((best.refreshFaults * 4) / 1024).toFixed(0)} MB) ≈ ${((best.refreshFaults * usPerFault) / 1000).toFixed(0)} ms of its ${fresh.toFixed(0)} ms; the next refresh ${warmRun.warmFaults.toLocaleString('en-US')} ≈ ${((warmRun.warmFaults * usPerFault) / 1000).toFixed(0)} ms`,
      );
      // The same floor in fresh processes (best of RUNS, like the refresh): first parse, first compute, first stringify.
      const cold: { scoreMs: number; stringifyMs: number }[] = [];
      for (let i = 0; i < RUNS; i++) cold.push(await coldFloor({ BENCH_INPUTS: inputsFile }, node.binary));
      const [coldScore, coldStringify] = [Math.min(...cold.map((c) => c.scoreMs)), Math.min(...cold.map((c) => c.stringifyMs))];
      const coldTotal = firstParse + coldScore + coldStringify;
      report(
        'refresh',
        `${clusters} clusters, ${node.label}: the same floor as a fresh process first runs it (V8 has optimised nothing yet; best of ${RUNS}), and the fresh refresh against it: what is left once V8's tiering up is set aside`,
        `${(coldTotal / 1000).toFixed(2)} s (${firstParse.toFixed(0)} + ${coldScore.toFixed(0)} + ${coldStringify.toFixed(0)} ms); fresh refresh = ${(fresh / coldTotal).toFixed(2)}× (for reference; the target is against the floor above)`,
      );
      const warm = Math.min(...timed.map((t) => t.warmMs));
      report(
        'refresh',
        `${clusters} clusters, ${node.label}: the same process's next refresh (decoded packs cached, their write counters read again)`,
        `${(warm / 1000).toFixed(2)} s = ${(warm / floor).toFixed(2)}× the floor`,
      );
    }
  }
  await rm(work, { recursive: true, force: true });

  // GET /api/fleet/scores, 1,000 clusters, cached, through the local server.
  await freshTables();
  const fleet = syntheticFleet(1_000, now);
  await upsertClusters(fleet.data.map((d) => d.cluster));
  await putRollups(fleet.rollups);
  const { service, token } = await startBenchService();
  try {
    for (const encoding of ['gzip', 'identity']) {
      const headers = { Authorization: `Bearer ${token}`, 'Accept-Encoding': encoding };
      const warmRead = await fetch(`${service.url}/api/fleet/scores`, { headers: { Authorization: headers.Authorization } });
      const size = (await warmRead.arrayBuffer()).byteLength;
      const result = await autocannon({ url: `${service.url}/api/fleet/scores`, headers, connections: 4, duration: 8 });
      const wire = result.throughput.average / Math.max(1, result.requests.average);
      report(
        'GET /api/fleet/scores',
        `1,000 clusters, cached, Accept-Encoding ${encoding} (${(size / 1024).toFixed(0)} KB JSON, ${(wire / 1024).toFixed(0)} KB on the wire), 4 connections, 8 s`,
        `p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ${Math.round(result.requests.average)} req/s, ${result.non2xx} non-2xx (target p99 < 50 ms)`,
      );
    }
  } finally {
    await service.stop();
  }
}
