// GET /api/issues with a year of issues stored (100,000), filtered to 7 days,
// through the local server: the list reads one activity-index range, never the table.
import autocannon from 'autocannon';
import { startBenchService } from './service.js';
import { putIssues, type IssueRecord } from '../../shared/db/issues.js';
import type { BenchContext } from './run.js';

export const title = 'Alert issues (issue 7): list over a year of issues';

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

export async function run({ report }: BenchContext): Promise<void> {
  const now = new Date();
  const started = Date.now();
  await putIssues(yearOfIssues(now));
  report('issues', `bulk load of ${TOTAL.toLocaleString('en-US')} issues`, `${Date.now() - started} ms`);
  const { service, token } = await startBenchService();
  try {
    const url = `${service.url}/api/issues?days=7`;
    const first = (await (await fetch(url, { headers: { Authorization: `Bearer ${token}` } })).json()) as { total: number };
    for (const connections of [1, 4]) {
      const result = await autocannon({ url, headers: { Authorization: `Bearer ${token}` }, connections, duration: 8 });
      report(
        'GET /api/issues',
        `${TOTAL.toLocaleString('en-US')} issues stored, days=7 (${first.total} in the window), page 1 of 20, ${connections} connection${connections > 1 ? 's' : ''}, 8 s`,
        `p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ${Math.round(result.requests.average)} req/s, ${result.non2xx} non-2xx`,
      );
    }
  } finally {
    await service.stop();
  }
}
