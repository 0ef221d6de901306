// What a pull records when the failure is not a query's: an answer over the bytes one answer may
// take, DynamoDB failing past its retries mid-run, the lock taken from the run; and the status
// leaving out errors past their expiry that DynamoDB's TTL has not deleted yet. Against a local
// query API whose answers each test chooses, and DynamoDB Local behind the test proxy.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockHolder, releaseLock, takeOverLock } from '../../shared/db/locks.js';
import { getPullRun, latestPullErrors, readPullStates, recordPullErrors } from '../../shared/db/metric-pulls.js';
import { windowDays } from '../../shared/db/days.js';
import { readClusterRollups } from '../../shared/db/metrics.js';
import { PULL_LOCK } from '../../shared/metric-pull/lock.js';
import { answerByteLimit, pullMetrics } from '../../shared/metric-pull/pull.js';
import { metricSourcesStatus } from '../../shared/metric-pull/status.js';
import { storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';
import type { DynamoProxy } from '../support/dynamo-proxy.js';
import { tableOf } from '../support/dynamo-proxy.js';
import { useMetricSources } from '../support/metric-sources.js';

const noWait = async () => {};
const MINUTE = 60;
/** The runs' time, on the minute: a day of backfill before it is one or two windows (split at midnight). */
const NOW = Math.floor(Date.now() / 1000 / MINUTE) * MINUTE - 10 * MINUTE;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

let proxy: DynamoProxy;
let server: Server;
let url: string;
let clusterId: string;
/** The query API's answer to a query_range (its form: query, start, end, step). */
let answer: (form: URLSearchParams) => Promise<string> = async () => matrix([]);

const matrix = (result: unknown[]) => JSON.stringify({ status: 'success', data: { resultType: 'matrix', result } });
/** One series of the test's cluster: value 1 at every step asked for. */
function everyStep(form: URLSearchParams): string {
  const values: [number, string][] = [];
  for (let t = Number(form.get('start')); t <= Number(form.get('end')); t += Number(form.get('step'))) values.push([t, '1']);
  return matrix([{ metric: { cluster_id: clusterId }, values }]);
}

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  clusterId = await storedCluster();
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      res.on('error', () => undefined); // a client that refuses a large answer closes the connection
      answer(new URLSearchParams(Buffer.concat(chunks).toString())).then(
        (body) => res.writeHead(200, { 'content-type': 'application/json' }).end(body),
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** The test's source: a day of backfill, one metric, requests of 5,000 points (four queries at once). */
const useSource = (key: string) =>
  useMetricSources({ url, backfillDays: 1, maxPointsPerRequest: 5000, metrics: [{ key, query: `sum by (cluster_id) (fh_${key})` }] });

/** The points of `key` stored for the test's cluster. */
async function storedCount(key: 'qps' | 'disk_used_pct' | 'memory_pct' | 'compaction_score'): Promise<number> {
  const rollups = await readClusterRollups(clusterId, windowDays(3, new Date(NOW * 1000)));
  return rollups.reduce((n, r) => n + (r.metrics[key]?.count ?? 0), 0);
}

describe('the bytes of answers in flight', () => {
  it("are the client's 64 MB shared among the queries at once, whole MB", () => {
    const MB = 2 ** 20;
    expect([1_000, 200_000, 250_000, 266_667, 400_001, 1_000_000].map(answerByteLimit)).toEqual([16 * MB, 16 * MB, 21 * MB, 32 * MB, 64 * MB, 64 * MB]);
  });

  it('an answer over its share is refused, the metric fails with a message that says what to change, and the run is recorded', async () => {
    await useSource('qps');
    // Far more series than clusters (a query not aggregated by cluster): 17 MB, over the 16 MB each of four may take.
    const series = `{"metric":{"cluster_id":"not-aggregated","instance":"fe-1:8030"},"values":[[${NOW},"1"]]}`;
    const large = `{"status":"success","data":{"resultType":"matrix","result":[${`${series},`.repeat(240_000)}${series}]}}`;
    expect(large.length).toBeGreaterThan(17 * 2 ** 20);
    answer = async () => large;
    const result = await pullMetrics({ now: new Date(NOW * 1000), sleep: noWait });
    const refused =
      /^the answer is more than 16 MB, the most one answer may take: lower max_points_per_request in metric-sources, or aggregate the query by the cluster label/;
    expect(result).toMatchObject({ outcome: 'failed', metrics: [{ metric_key: 'qps', error: expect.stringMatching(refused) }] });
    const status = await metricSourcesStatus(new Date(NOW * 1000));
    expect(status.last_run?.outcome).toBe('failed');
    expect(status.metrics.find((m) => m.metric_key === 'qps')?.last_error?.message).toMatch(refused);
    expect(status.errors.some((e) => e.metric_key === 'qps' && refused.test(e.message))).toBe(true);
    expect(await storedCount('qps')).toBe(0);
  });
});

describe('what Prometheus says beside an answer', () => {
  it("keeps the first warning or info of the last run as the metric's warning_last, quoted; a run whose answers have none clears it", async () => {
    await useSource('compaction_score');
    const info = 'PromQL info: metric might not be a counter, name does not end in _total/_sum/_count/_bucket: "fh_compaction_score"';
    const long = `PromQL warning: ${'x'.repeat(1000)}`;
    let notes: { warnings?: string[]; infos?: string[] } = { infos: [info] };
    answer = async (form) => JSON.stringify({ ...JSON.parse(everyStep(form)), ...notes });
    const warningOf = async (at: number) =>
      (await metricSourcesStatus(new Date(at * 1000))).metrics.find((m) => m.metric_key === 'compaction_score')?.warning_last;

    expect((await pullMetrics({ now: new Date(NOW * 1000), sleep: noWait })).outcome).toBe('ok');
    expect(await storedCount('compaction_score')).toBeGreaterThan(0);
    expect(await warningOf(NOW)).toBe(info);

    // A warning before the infos; no more of it than an error would quote.
    notes = { warnings: [long], infos: [info] };
    expect((await pullMetrics({ now: new Date((NOW + 5 * MINUTE) * 1000), sleep: noWait })).outcome).toBe('ok');
    expect(await warningOf(NOW + 5 * MINUTE)).toBe(long.slice(0, 300));

    notes = {};
    expect((await pullMetrics({ now: new Date((NOW + 10 * MINUTE) * 1000), sleep: noWait })).outcome).toBe('ok');
    expect(await warningOf(NOW + 10 * MINUTE)).toBeNull();
  });
});

describe('a DynamoDB failure inside the loop', () => {
  it('stops the run, which records the error, keeps the window pending and releases the lock; the next run replays it exactly', async () => {
    await useSource('disk_used_pct');
    answer = async (form) => everyStep(form);
    const throttled = { type: 'ProvisionedThroughputExceededException', message: 'The level of configured provisioned throughput for the table was exceeded.' };
    const writes = new Set(['PutItem', 'UpdateItem', 'BatchWriteItem', 'TransactWriteItems']);
    const stop = proxy.watch((request) => (writes.has(request.operation) && tableOf(request).endsWith('metrics') ? throttled : undefined));
    let result: Awaited<ReturnType<typeof pullMetrics>>;
    try {
      result = await pullMetrics({ now: new Date(NOW * 1000), sleep: noWait });
    } finally {
      stop();
    }
    const stopped =
      /^stopped: storing the window failed \(The level of configured provisioned throughput for the table was exceeded\.\); the next run replays it$/;
    expect(result.metrics[0]?.error).toMatch(stopped);
    expect(result.outcome).toBe('failed');
    const status = await metricSourcesStatus(new Date(NOW * 1000));
    expect(status.last_run?.outcome).toBe('failed');
    expect(status.metrics.find((m) => m.metric_key === 'disk_used_pct')?.last_error?.message).toMatch(stopped);
    expect(status.errors.some((e) => e.metric_key === 'disk_used_pct' && stopped.test(e.message))).toBe(true);
    const state = (await readPullStates(['disk_used_pct'])).get('disk_used_pct')!;
    const oldest = Math.ceil((NOW - 86_400) / MINUTE) * MINUTE;
    expect(state).toMatchObject({ watermark: null, pending_from: oldest });
    expect(await lockHolder(PULL_LOCK)).toBeUndefined();

    // With DynamoDB back, the next run replays the pending window and goes on: every step once.
    const again = await pullMetrics({ now: new Date(NOW * 1000), sleep: noWait });
    expect(again.outcome).toBe('ok');
    expect((await readPullStates(['disk_used_pct'])).get('disk_used_pct')).toMatchObject({ watermark: NOW, pending_from: null, pending_to: null });
    expect(again.accepted).toBe((NOW - oldest) / MINUTE + 1);
    expect(await storedCount('disk_used_pct')).toBe(again.accepted);
  });

  it('the lock taken from the run: it stops before writing the window, records its error only in the log, and leaves the lock to its holder', async () => {
    await useSource('memory_pct');
    const before = { run: await getPullRun(), state: (await readPullStates(['memory_pct'])).get('memory_pct') };
    // While the run queries its first window, another run takes the lock over (as after a lease that ran out).
    let takenBy: string | undefined;
    answer = async (form) => {
      if (!takenBy) {
        const holder = await lockHolder(PULL_LOCK);
        if (holder && (await takeOverLock(PULL_LOCK, holder.owner, 'another-run', 60_000))) takenBy = 'another-run';
      }
      return everyStep(form);
    };
    try {
      const result = await pullMetrics({ now: new Date(NOW * 1000), sleep: noWait });
      expect(takenBy).toBe('another-run');
      const lost = /^stopped: another run took the lock \(this run outlived its lease\); nothing more of this run is stored$/;
      expect(result.metrics[0]?.error).toMatch(lost);
      // The states and the run record are the holder's: untouched. The error is appended to the log.
      expect((await readPullStates(['memory_pct'])).get('memory_pct')).toEqual(before.state);
      expect(await getPullRun()).toEqual(before.run);
      expect(await storedCount('memory_pct')).toBe(0);
      expect((await latestPullErrors(20, new Date(NOW * 1000))).some((e) => e.metric_key === 'memory_pct' && lost.test(e.message))).toBe(true);
      expect((await lockHolder(PULL_LOCK))?.owner).toBe('another-run');
    } finally {
      await releaseLock(PULL_LOCK, 'another-run');
    }
  });
});

describe('a DynamoDB failure outside the windows', () => {
  it('(reading the inventory) fails the run, which is recorded as failed with the error, keeping the last success; the lock is released', async () => {
    await useSource('qps');
    answer = async (form) => everyStep(form);
    const ok = await pullMetrics({ now: new Date(NOW * 1000), sleep: noWait });
    expect(ok.outcome).toBe('ok');
    const lastSuccess = (await getPullRun())?.last_success_at;
    expect(lastSuccess).toBeTruthy();

    const throttled = { type: 'ProvisionedThroughputExceededException', message: 'The level of configured provisioned throughput for the table was exceeded.' };
    const stop = proxy.watch((request) => (tableOf(request).endsWith('clusters') ? throttled : undefined));
    const later = NOW + 5 * MINUTE;
    try {
      await expect(pullMetrics({ now: new Date(later * 1000), sleep: noWait })).rejects.toThrow(/provisioned throughput/);
    } finally {
      stop();
    }
    const run = await getPullRun();
    expect(run).toMatchObject({ started_at: iso(later), outcome: 'failed', accepted: 0, refused: 0, last_success_at: lastSuccess });
    const status = await metricSourcesStatus(new Date(later * 1000));
    expect(status.last_run?.outcome).toBe('failed');
    expect(status.errors.some((e) => e.metric_key === null && /^run failed: .*provisioned throughput/.test(e.message))).toBe(true);
    expect(await lockHolder(PULL_LOCK)).toBeUndefined();
  });
});

describe('errors past their expiry', () => {
  it('are not shown, though DynamoDB has not deleted them yet', async () => {
    const DAY = 86_400;
    await recordPullErrors([
      { at: iso(NOW - 8 * DAY), metric_key: 'qps', message: 'eight days ago: expired' },
      { at: iso(NOW - 7 * DAY - 1), metric_key: 'qps', message: 'a second past its seven days: expired' },
      { at: iso(NOW - 6 * DAY), metric_key: 'qps', message: 'six days ago: kept' },
    ]);
    const shown = (await metricSourcesStatus(new Date(NOW * 1000))).errors.map((e) => e.message);
    expect(shown).toContain('six days ago: kept');
    expect(shown.filter((m) => m.endsWith('expired'))).toEqual([]);
  });
});
