// The chat assistant's run_sql (shared/chat/sql.ts) as deployed: the Lambda
// bundle with its worker thread and SQLite's WebAssembly beside it
// (test/chat/sql-bundle.ts), on plain Node with the Lambdas' NODE_OPTIONS
// (under tsx the worker would load tsx too). Times opening a 1,000-cluster
// snapshot (worker start, packing, load), typical questions, stopping a
// runaway query at the time limit, and the first query after that stop (a
// replacement worker loading the snapshot again). Pure, so it runs before
// DynamoDB Local starts.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { serialize } from 'node:v8';
import { LAMBDA_NODE_OPTIONS } from '../../infra/bundling.js';
import { bundleSql } from '../chat/sql-bundle.js';
import { bigFleet, RUNAWAY } from '../chat/sql-fleets.js';
import type { Report } from './run.js';

export const title = 'run_sql: a 1,000-cluster snapshot in the Lambda bundle';

const exec = promisify(execFile);

const CLUSTERS = 1000;
const DAYS = 14;
const LOADS = 5;
const RUNAWAYS = 3;

const QUERIES = {
  'one cluster, one metric, 14 days':
    "SELECT day, max FROM metric_daily WHERE cluster_id = (SELECT cluster_id FROM clusters WHERE cluster_name = 'cluster-500') AND metric_key = 'disk_used_pct' ORDER BY day",
  'fleet-wide peak per metric': 'SELECT metric_key, max(max), avg(avg) FROM metric_daily GROUP BY metric_key',
  'worst 10 tier-S clusters with latest disk':
    "SELECT s.cluster_name, s.tier_adjusted_score, m.last FROM scores s JOIN metric_daily m ON m.cluster_id = s.cluster_id AND m.metric_key = 'disk_used_pct' AND m.day = '2026-11-20' WHERE s.customer_tier = 'S' ORDER BY s.tier_adjusted_score LIMIT 10",
};

/** Runs beside the bundle; prints one JSON line of milliseconds. */
const PROBE = `import { readFileSync } from 'node:fs';
import { deserialize } from 'node:v8';
import { openFleetDatabase, SQL_LIMITS, SqlRefused } from './index.mjs';
const snapshot = deserialize(readFileSync('fleet.bin'));
const since = (started) => performance.now() - started;
const opens = [];
const loads = [];
let db;
for (let i = 0; i < ${LOADS}; i++) {
  await db?.close();
  const started = performance.now();
  db = await openFleetDatabase(snapshot);
  opens.push(since(started));
  await db.query('SELECT 1');
  loads.push(since(started));
}
const rows = (await db.query('SELECT count(*) FROM metric_daily')).rows[0][0];
const queries = {};
for (const [what, sql] of Object.entries(${JSON.stringify(QUERIES)})) {
  await db.query(sql);
  queries[what] = (await db.query(sql)).duration_ms;
}
const stops = [];
const restarts = [];
for (let i = 0; i < ${RUNAWAYS}; i++) {
  const started = performance.now();
  const outcome = await db.query(${JSON.stringify(RUNAWAY)}).then(() => 'answered', (e) => (e instanceof SqlRefused ? 'stopped' : String(e)));
  if (outcome !== 'stopped') throw new Error('the runaway query was not stopped: ' + outcome);
  stops.push(since(started));
  const again = performance.now();
  await db.query('SELECT count(*) FROM clusters');
  restarts.push(since(again));
}
await db.close();
console.log(JSON.stringify({ limitMs: SQL_LIMITS.timeoutMs, rows, opens, loads, queries, stops, restarts }));
`;

interface ProbeResult {
  limitMs: number;
  rows: number;
  opens: number[];
  loads: number[];
  queries: Record<string, number>;
  stops: number[];
  restarts: number[];
}

const median = (ms: number[]) => [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)]!;
const spread = (ms: number[]) => `${median(ms).toFixed(0)} / ${Math.max(...ms).toFixed(0)} ms`;

export async function run(report: Report): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'fleet-chat-sql-'));
  try {
    await bundleSql(dir);
    // Structured clone's format, which carries the rollup columns' typed arrays.
    await writeFile(join(dir, 'fleet.bin'), serialize(bigFleet(CLUSTERS, DAYS)));
    await writeFile(join(dir, 'probe.mjs'), PROBE);
    // A directory outside the repository: the bundle finds only what a Lambda has beside it.
    const { stdout } = await exec(process.execPath, ['probe.mjs'], { cwd: dir, env: { ...process.env, NODE_OPTIONS: LAMBDA_NODE_OPTIONS } });
    const r = JSON.parse(stdout.trim().split('\n').pop()!) as ProbeResult;
    const fleet = `${CLUSTERS.toLocaleString('en-US')} clusters × ${DAYS} days (${r.rows.toLocaleString('en-US')} metric_daily rows)`;
    report(
      'chat-sql',
      `open a snapshot of ${fleet}, median / max of ${LOADS}: its schema text (what the model's first call waits for) / loaded (worker start + pack + load, what the first query waits for)`,
      `${spread(r.opens)} / ${spread(r.loads)}`,
    );
    for (const [what, ms] of Object.entries(r.queries)) report('chat-sql', `query: ${what}`, `${ms} ms`);
    report('chat-sql', `runaway query stopped, median / max of ${RUNAWAYS}`, `${spread(r.stops)} (limit ${r.limitMs} ms)`);
    report('chat-sql', 'first query after the stop (a replacement worker loads the snapshot), median / max', spread(r.restarts));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
