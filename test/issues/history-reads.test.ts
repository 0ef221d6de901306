// What an issue's cluster history reads from DynamoDB, seen on the wire through the proxy: the
// issues table keeps every issue a cluster ever had (no retention), each with up to 50 alert
// names and notes of up to 10 KB, and the history shows the newest 50. It counts and orders
// summaries and reads whole only the issues it shows; the answer is what a brute-force
// computation over every stored issue gives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../functions/issues.js';
import { getIssue, writeGrouping } from '../../shared/db/issues.js';
import { CLUSTER_HISTORY_LIMIT, issueView, newestFirst } from '../../shared/issues/queries.js';
import { useTestTables } from '../support/dynamo.js';
import { requestsOf, tableOf, type DynamoProxy, type WireRequest } from '../support/dynamo-proxy.js';
import { call, type Handler } from '../support/events.js';
import { userToken, useTestJwtSecret } from '../support/tokens.js';

const ISSUES = 70;
const HEAVY = ['alert_names', 'notes'];
const CLUSTER = 'history-cluster';
const ids: string[] = [];
let proxy: DynamoProxy;
let token: string;

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  useTestJwtSecret();
  token = await userToken('viewer');
  // 70 issues of one cluster, one every 6 hours back, each naming 50 long alert names; the newest Ongoing.
  const now = Date.now();
  for (let n = 0; n < ISSUES; n++) {
    const last = new Date(now - n * 6 * 3_600_000);
    const id = `hist-${String(n).padStart(2, '0')}`;
    ids.push(id);
    await writeGrouping(
      {
        issue_id: id,
        issue_name: `Disk ${n % 5}`,
        severity: n % 2 ? 'Warning' : 'Critical',
        status: n === 0 ? 'Ongoing' : 'Resolved',
        cluster_id: CLUSTER,
        alert_count: 50,
        alert_names: Array.from({ length: 50 }, (_, k) => `DiskUsageHigh_${n}_${k}_${'x'.repeat(100)}`),
        first_seen: new Date(last.getTime() - 3_600_000).toISOString(),
        last_seen: last.toISOString(),
        resolved_at: n === 0 ? null : new Date(last.getTime() + 60_000).toISOString(),
        group_key: `cluster=${CLUSTER}|alert_name=Disk ${n % 5}|n=${n}`,
      },
      { cluster_name: 'history', customer_name: 'Acme' },
      null,
    );
  }
});
afterAll(() => proxy.close());

/** How many issues' alert names or notes a request may send back: a batch the keys it names, a query every issue of its range. */
function heavyAskedFor(r: WireRequest): number {
  if (!tableOf(r).endsWith('issues')) return 0;
  const read = r.operation === 'BatchGetItem' ? Object.values(r.input.RequestItems as Record<string, any>)[0] : r.input;
  const names: Record<string, string> = read.ExpressionAttributeNames ?? {};
  const fields = (read.ProjectionExpression as string | undefined)?.split(',').map((p) => names[p.trim()] ?? p.trim());
  if (fields && !fields.some((f) => HEAVY.includes(f))) return 0;
  if (r.operation === 'GetItem') return 1;
  if (r.operation === 'BatchGetItem') return read.Keys.length;
  return ['Query', 'Scan'].includes(r.operation) ? Number.POSITIVE_INFINITY : 0;
}

describe("an issue's cluster history", () => {
  it('reads alert names and notes of the issues it shows only, and answers what every stored issue gives', async () => {
    const route = '/api/issues/{issue_id}/cluster-history';
    const { result, requests } = await requestsOf(proxy, () =>
      call(handler as Handler, {
        method: 'GET',
        path: route.replace('{issue_id}', ids[5]!),
        routeKey: `GET ${route}`,
        params: { issue_id: ids[5]! },
        headers: { authorization: `Bearer ${token}` },
      }),
    );
    expect(result.statusCode).toBe(200);
    const now = new Date();
    const others = (await Promise.all(ids.filter((id) => id !== ids[5]).map(async (id) => (await getIssue(id))!))).sort(newestFirst);
    const body = result.json!;
    expect(body.total).toBe(ISSUES - 1);
    expect(body.cluster_name).toBe('history');
    expect(body.issues.map((i: { issue_id: string }) => i.issue_id)).toEqual(others.slice(0, CLUSTER_HISTORY_LIMIT).map((i) => i.issue_id));
    // Durations of the Ongoing issue move with the clock: compared apart.
    const withoutDuration = ({ duration_minutes: _d, ...rest }: { duration_minutes: number }) => rest;
    expect(body.issues.map(withoutDuration)).toEqual(others.slice(0, CLUSTER_HISTORY_LIMIT).map((i) => withoutDuration(issueView(i, now))));
    // The issue itself (one GetItem), and the 50 shown.
    expect(requests.reduce((n, r) => n + heavyAskedFor(r), 0)).toBeLessThanOrEqual(CLUSTER_HISTORY_LIMIT + 1);
  });
});
