// GET /api/issues with a year of issues stored (100,000), filtered to 7 days,
// through the local server: the list reads one activity-index range, never the
// table, and keeps it per container behind the issues' generation marker
// (issue 21 §3). Measured right after a write (the marker moved: the window is
// read again), and cached (nothing changed: one marker read), beside the
// cached GET /api/fleet/kpis of a 1,000-cluster fleet on the same server.
import autocannon from 'autocannon';
import { startBenchService } from './service.js';
import { upsertClusters } from '../../shared/db/clusters.js';
import { issuesChanged, putIssues, type IssueRecord } from '../../shared/db/issues.js';
import { putRollups } from '../../shared/db/metrics.js';
import { issueCacheSettings } from '../../shared/issues/list-cache.js';
import { syntheticFleet } from './synthetic-fleet.js';
import type { BenchContext } from './run.js';

export const title = 'Alert issues (issues 7, 21): list over a year of issues, after a write and cached';

const TOTAL = 100_000;
const DAY_MS = 86_400_000;

/** A year of issues on 2,000 clusters, evenly spread; 1 in 200 still Ongoing. */
function yearOfIssues(now: Date): IssueRecord[] {
  return Array.from({ length: TOTAL }, (_, i) => {
    const first = new Date(now.getTime() - (i * 365 * DAY_MS) / TOTAL - 3_600_000);
    const ongoing = i % 200 === 0;
    const last = new Date(first.getTime() + 20 * 60_000);
    const cluster = i % 2_000;
    return {
      issue_id: `iss-bench-${String(i).padStart(6, '0')}`,
      group_key: `cluster=c${cluster}|alert_name=Alert${i % 13}`,
      issue_name: `Alert${i % 13}`,
      severity: i % 5 === 0 ? 'Critical' : 'Warning',
      status: ongoing ? 'Ongoing' : 'Resolved',
      cluster_id: `c${cluster}`,
      alert_count: 1 + (i % 4),
      alert_names: [`Alert${i % 13}`],
      first_seen: first.toISOString(),
      last_seen: last.toISOString(),
      resolved_at: ongoing ? null : new Date(last.getTime() + 30 * 60_000).toISOString(),
      cluster_name: `prod-db-${cluster}`,
      customer_name: `Customer ${cluster % 150}`,
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

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

export async function run({ report }: BenchContext): Promise<void> {
  const now = new Date();
  const started = Date.now();
  await putIssues(yearOfIssues(now));
  report('issues', `bulk load of ${TOTAL.toLocaleString('en-US')} issues`, `${Date.now() - started} ms`);
  const fleet = syntheticFleet(1_000, now);
  await upsertClusters(fleet.data.map((d) => d.cluster));
  await putRollups(fleet.rollups);
  const { service, token } = await startBenchService();
  const headers = { Authorization: `Bearer ${token}` };
  try {
    const url = `${service.url}/api/issues?days=7`;
    const first = (await (await fetch(url, { headers })).json()) as { total: number };
    const window = `${TOTAL.toLocaleString('en-US')} issues stored, days=7 (${first.total} in the window), page 1 of 20`;

    // Right after a write anywhere: the marker moved, so the window and the page are read again.
    const afterWrite: number[] = [];
    for (let i = 0; i < 21; i++) {
      await issuesChanged();
      const start = process.hrtime.bigint();
      const res = await fetch(url, { headers });
      await res.arrayBuffer();
      afterWrite.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    report('GET /api/issues', `${window}, right after a write (window read again), 1 connection, 21 requests`, `p50 ${median(afterWrite).toFixed(1)} ms`);

    // Nothing changed: one marker read per request. Past the settling time, so what is read is kept.
    await new Promise((resolve) => setTimeout(resolve, issueCacheSettings.settleMs + 100));
    const routes = [
      ['GET /api/issues', '/api/issues?days=7'],
      ['GET /api/fleet/kpis', '/api/fleet/kpis'],
    ] as const;
    // Both warmed alike first (the fleet view computed, the server's code compiled), so neither pays the other's warm-up.
    for (const [, path] of routes) await autocannon({ url: `${service.url}${path}`, headers, connections: 1, duration: 2 });
    const p50s: Record<string, number> = {};
    for (const [name, path] of routes) {
      for (const connections of [1, 4]) {
        const result = await autocannon({ url: `${service.url}${path}`, headers, connections, duration: 8 });
        p50s[`${name} ${connections}`] = result.latency.p50;
        report(
          name,
          `${name === 'GET /api/issues' ? window : '1,000 clusters'}, cached, ${connections} connection${connections > 1 ? 's' : ''}, 8 s`,
          `p50 ${result.latency.p50} ms, mean ${result.latency.average.toFixed(2)} ms, p99 ${result.latency.p99} ms, ${Math.round(result.requests.average)} req/s, ${result.non2xx} non-2xx`,
        );
      }
    }
    for (const connections of [1, 4])
      report(
        'GET /api/issues',
        `cached p50 ÷ GET /api/fleet/kpis p50, ${connections} connection${connections > 1 ? 's' : ''} (issue 21: at most 3)`,
        `${(p50s[`GET /api/issues ${connections}`]! / Math.max(1, p50s[`GET /api/fleet/kpis ${connections}`]!)).toFixed(2)}`,
      );
  } finally {
    await service.stop();
  }
}
