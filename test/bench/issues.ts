// GET /api/issues with a year of issues stored (100,000), filtered to 7 days,
// through the local server: the list reads one activity-index range, never the
// table, and keeps it per container behind the issues' generation marker
// (issue 21 §3). Measured right after a write (the marker moved: the window is
// read again), and cached (nothing changed: one marker read), beside the
// cached GET /api/fleet/kpis of a 1,000-cluster fleet on the same server.
// GET /api/ai-issues the same way, over a year of 20,000 AI issues. Then each of them and GET /api/fleet/scores as a
// watch page's minute read: the 200 (gzip) beside the 304 an unchanged answer gets (shared/http/README.md).
import autocannon from 'autocannon';
import { startBenchService } from './service.js';
import { upsertClusters } from '../../shared/db/clusters.js';
import { aiIssuesChanged, writeAiGrouping, type AiGrouping } from '../../shared/db/ai-issues.js';
import { mapLimit } from '../../shared/db/client.js';
import { issuesChanged, putIssues, type IssueRecord } from '../../shared/db/issues.js';
import { putRollups } from '../../shared/db/metrics.js';
import { issueCacheSettings } from '../../shared/issues/list-cache.js';
import { syntheticFleet } from './synthetic-fleet.js';
import type { BenchContext } from './run.js';

export const title = 'Alert issues (issues 7, 21): list over a year of issues, after a write and cached';

const TOTAL = 100_000;
const AI_TOTAL = 20_000;
const DAY_MS = 86_400_000;

/**
 * The `i`th of `total` issues spread evenly over a year on 2,000 clusters, 1 in 200 still Ongoing:
 * what rule and AI issues share (when, where, how bad).
 */
function yearSpread(i: number, total: number, now: Date) {
  const first = new Date(now.getTime() - (i * 365 * DAY_MS) / total - 3_600_000);
  const last = new Date(first.getTime() + 20 * 60_000);
  const ongoing = i % 200 === 0;
  const cluster = i % 2_000;
  return {
    first,
    fields: {
      severity: i % 5 === 0 ? 'Critical' : 'Warning',
      status: ongoing ? 'Ongoing' : 'Resolved',
      cluster_id: `c${cluster}`,
      cluster_name: `prod-db-${cluster}`,
      customer_name: `Customer ${cluster % 150}`,
      first_seen: first.toISOString(),
      last_seen: last.toISOString(),
      resolved_at: ongoing ? null : new Date(last.getTime() + 30 * 60_000).toISOString(),
    } as const,
  };
}

/** A year of issues. */
function yearOfIssues(now: Date): IssueRecord[] {
  return Array.from({ length: TOTAL }, (_, i) => {
    const { fields } = yearSpread(i, TOTAL, now);
    return {
      ...fields,
      issue_id: `iss-bench-${String(i).padStart(6, '0')}`,
      group_key: `cluster=${fields.cluster_id}|alert_name=Alert${i % 13}`,
      issue_name: `Alert${i % 13}`,
      alert_count: 1 + (i % 4),
      alert_names: [`Alert${i % 13}`],
      triage_status: i % 3 === 0 ? 'Investigating' : '',
      disposition_status: '',
      assignee: i % 4 === 0 ? 'oncall' : '',
      notes: '',
      ticket_key: '',
      ticket_url: '',
      updated_at: '',
      updated_by: '',
      grouped_at: now.toISOString(),
      grouping_version: 1,
      triage_version: 0,
      superseded_by: null,
      ticket_claim: null,
      ticket_claimed_at: null,
    } satisfies IssueRecord;
  });
}

/** A year of AI issues, as grouping writes them (10 alert keys each). */
function yearOfAiIssues(now: Date): AiGrouping[] {
  return Array.from({ length: AI_TOTAL }, (_, i) => {
    const { first, fields } = yearSpread(i, AI_TOTAL, now);
    return {
      ...fields,
      issue_id: `ai-bench-${String(i).padStart(6, '0')}`,
      issue_name: `Storage pressure ${i % 11}`,
      alert_count: 10,
      ai_reasoning: 'Disk and memory alerts of one node within minutes of each other.',
      ai_summary: 'One node ran short of disk, then of memory.',
      grouped_by: 'rules',
      alert_keys: Array.from({ length: 10 }, (_, k) => `${first.toISOString()}#fp${i}-${k}`),
    } satisfies AiGrouping;
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

/**
 * autocannon's run, with each 2xx answer's time kept as it measured it (fractions of a millisecond): its own
 * percentiles are whole milliseconds, and where a cached read takes one, p50s of 1 and 4 ms made a ratio of 4
 * out of means 2.4 apart (stop 76). The target's p50 is taken from these.
 */
function loadTest(opts: autocannon.Options): Promise<{ result: autocannon.Result; p50: number }> {
  return new Promise((resolve, reject) => {
    const times: number[] = [];
    const tracker = autocannon(opts, (error, result) => (error ? reject(error) : resolve({ result, p50: median(times) })));
    tracker.on('response', (_client, statusCode, _bytes, responseTime) => {
      if ((statusCode >= 200 && statusCode < 300) || statusCode === 304) times.push(responseTime);
    });
  });
}

export async function run({ report }: BenchContext): Promise<void> {
  const now = new Date();
  let started = Date.now();
  await putIssues(yearOfIssues(now));
  report('issues', `bulk load of ${TOTAL.toLocaleString('en-US')} issues`, `${Date.now() - started} ms`);
  started = Date.now();
  await mapLimit(yearOfAiIssues(now), 16, (g) => writeAiGrouping(g, now));
  await aiIssuesChanged(); // as a regrouping does after its writes
  report('issues', `${AI_TOTAL.toLocaleString('en-US')} AI issues written one by one as grouping writes them, 16 in flight`, `${Date.now() - started} ms`);
  const fleet = syntheticFleet(1_000, now);
  await upsertClusters(fleet.data.map((d) => d.cluster));
  await putRollups(fleet.rollups);
  const { service, token } = await startBenchService();
  const headers = { Authorization: `Bearer ${token}` };
  try {
    const lists = [
      { name: 'GET /api/issues', path: '/api/issues?days=7', stored: `${TOTAL.toLocaleString('en-US')} issues`, changed: issuesChanged },
      { name: 'GET /api/ai-issues', path: '/api/ai-issues?days=7', stored: `${AI_TOTAL.toLocaleString('en-US')} AI issues`, changed: aiIssuesChanged },
    ];
    const windows: Record<string, string> = {};
    for (const list of lists) {
      const url = `${service.url}${list.path}`;
      const first = (await (await fetch(url, { headers })).json()) as { total: number; total_pages: number };
      windows[list.name] = `${list.stored} stored, days=7 (${first.total} in the window), page 1 of ${first.total_pages}`;

      // Right after a write anywhere: the marker moved, so the window and the page are read again.
      const afterWrite: number[] = [];
      for (let i = 0; i < 21; i++) {
        await list.changed();
        const start = process.hrtime.bigint();
        const res = await fetch(url, { headers });
        await res.arrayBuffer();
        afterWrite.push(Number(process.hrtime.bigint() - start) / 1e6);
      }
      report(list.name, `${windows[list.name]}, right after a write (window read again), 1 connection, 21 requests`, `p50 ${median(afterWrite).toFixed(1)} ms`);
    }

    // Nothing changed: one marker read per request. Past the settling time, so what is read is kept.
    await new Promise((resolve) => setTimeout(resolve, issueCacheSettings.settleMs + 100));
    const routes = [...lists.map((l) => [l.name, l.path] as const), ['GET /api/fleet/kpis', '/api/fleet/kpis'] as const];
    // All warmed alike first (the fleet view computed, the server's code compiled), so none pays another's warm-up.
    for (const [, path] of routes) await autocannon({ url: `${service.url}${path}`, headers, connections: 1, duration: 2 });
    const p50s: Record<string, number> = {};
    for (const [name, path] of routes) {
      for (const connections of [1, 4]) {
        const { result, p50 } = await loadTest({ url: `${service.url}${path}`, headers, connections, duration: 8 });
        p50s[`${name} ${connections}`] = p50;
        report(
          name,
          `${windows[name] ?? '1,000 clusters'}, cached, ${connections} connection${connections > 1 ? 's' : ''}, 8 s`,
          `p50 ${p50.toFixed(2)} ms, mean ${result.latency.average.toFixed(2)} ms, p99 ${result.latency.p99} ms, ${Math.round(result.requests.average)} req/s, ${result.non2xx} non-2xx`,
        );
      }
    }
    // A watch page's minute read (infra/web/src/api/live.ts) as a browser sends it (gzip): the 200, and the 304 its
    // HTTP cache gets when nothing changed (If-None-Match with the 200's ETag: no body built, serialized or gzipped).
    const gzip = { ...headers, 'Accept-Encoding': 'gzip' };
    for (const [name, path] of [...routes, ['GET /api/fleet/scores', '/api/fleet/scores'] as const]) {
      for (const conditional of [false, true]) {
        // The ETag of the answer just before: an issue list's answer changes when a minute passes (an Ongoing
        // issue's duration_minutes), and its 304s stop then (the statuses say how many there were).
        const etag = conditional ? ((await fetch(`${service.url}${path}`, { headers: gzip })).headers.get('etag') ?? '') : '';
        const sent = conditional ? { ...gzip, 'If-None-Match': etag } : gzip;
        const { result, p50 } = await loadTest({ url: `${service.url}${path}`, headers: sent, connections: 1, duration: 8 });
        report(
          name,
          `${windows[name] ?? '1,000 clusters'}, cached, ${conditional ? 'If-None-Match: its ETag' : 'gzip'}, 1 connection, 8 s`,
          `p50 ${p50.toFixed(2)} ms, mean ${result.latency.average.toFixed(2)} ms, p99 ${result.latency.p99} ms, ${result['2xx']} 200 and ${result['3xx']} 304, ${(result.throughput.total / result.requests.total / 1024).toFixed(2)} KB a response on the wire`,
        );
      }
    }
    for (const list of lists)
      for (const connections of [1, 4])
        report(
          list.name,
          `cached p50 ÷ GET /api/fleet/kpis p50, ${connections} connection${connections > 1 ? 's' : ''} (issue 21: at most 3)`,
          `${(p50s[`${list.name} ${connections}`]! / p50s[`GET /api/fleet/kpis ${connections}`]!).toFixed(2)}`,
        );
  } finally {
    await service.stop();
  }
}
