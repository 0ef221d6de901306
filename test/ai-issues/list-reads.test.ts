// What the AI issues list and KPIs read from DynamoDB, seen on the wire through the proxy: an AI
// issue links up to 500 alert keys (tens of kilobytes) and carries the model's reasoning and
// summary, and a window holds every AI issue of up to 365 days, so the list reads those only
// for the page it answers and the KPIs (also read by every Prometheus scrape) never. The
// answers still match a brute-force computation over every AI issue as stored, superseded
// ones left out.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { handler } from '../../functions/ai-issues.js';
import { aiIssueView } from '../../shared/ai-issues/queries.js';
import { transactWrite } from '../../shared/db/client.js';
import { aiTriageAction, getAiIssue, getAiIssues, retireAiIssue, writeAiGrouping, type AiIssueRecord } from '../../shared/db/ai-issues.js';
import { activityKey } from '../../shared/db/issues.js';
import { activeUsernames } from '../../shared/issues/assignee.js';
import { distinct, kpiCounts, matches, newestFirst, windowStart } from '../../shared/issues/queries.js';
import { IssueListQuery } from '../../shared/routes/common.js';
import { requestsOf, tableOf, type DynamoProxy, type WireRequest } from '../support/dynamo-proxy.js';
import { call, type Handler } from '../support/events.js';
import { itemsAskedFor, useWatchedTables } from '../support/read-costs.js';

const HEAVY = ['alert_keys', 'ai_reasoning', 'ai_summary'];
const ISSUES = 20;
const SUPERSEDED = [3, 10, 15];
const HOUR_MS = 3_600_000;
const ids: string[] = [];
let proxy: DynamoProxy;
let token: string;

beforeAll(async () => {
  ({ proxy, token } = await useWatchedTables());
  // 20 AI issues, one every 9 hours back to 7 days: four clusters of three customers, every
  // fourth Ongoing, 300 alert keys and texts at the model's bound each.
  const now = Date.now();
  for (let n = 0; n < ISSUES; n++) {
    const last = new Date(now - n * 9 * HOUR_MS);
    const ongoing = n % 4 === 0;
    const id = `ai-reads-${String(n).padStart(2, '0')}`;
    ids.push(id);
    await writeAiGrouping({
      issue_id: id,
      issue_name: `Group ${n % 6}`,
      severity: n % 3 === 0 ? 'Critical' : 'Warning',
      status: ongoing ? 'Ongoing' : 'Resolved',
      cluster_id: `cluster-id-${n % 4}`,
      cluster_name: `cluster-${n % 4}`,
      customer_name: `Customer ${'ABC'[n % 3]}`,
      alert_count: 300 + n,
      alert_keys: Array.from({ length: 300 }, (_, k) => `${new Date(last.getTime() - k * 60_000).toISOString()}#${'f'.repeat(40)}${n}-${k}`),
      first_seen: new Date(last.getTime() - (n + 1) * 17 * 60_000).toISOString(),
      last_seen: last.toISOString(),
      resolved_at: ongoing ? null : new Date(last.getTime() + 10 * 60_000).toISOString(),
      ai_reasoning: `reasoning ${n} `.repeat(150).slice(0, 2_000),
      ai_summary: `summary ${n} `.repeat(200).slice(0, 2_000),
      grouped_by: 'llm:gpt-4o-mini',
    });
    // Some triaged (assigned); the superseded ones must be, to be kept as history.
    if (n % 5 === 1 || SUPERSEDED.includes(n)) await transactWrite([aiTriageAction(id, { assignee: 'someone', notes: `note ${n}` }, 0, 'tester')]);
  }
  for (const n of SUPERSEDED) await retireAiIssue((await getAiIssue(ids[n]!))!, ids[n - 1]!);
});
afterAll(() => proxy.close());

/** The list cache's read of the generation marker (shared/db/ai-issues.ts): an item with no issue fields. */
const markerRead = (r: WireRequest) => r.operation === 'GetItem' && r.input.Key?.pk?.S === 'CACHE';

/** How many AI issues' alert keys or texts a request may send back. */
const heavyAskedFor = (r: WireRequest) => (tableOf(r).endsWith('ai-issues') && !markerRead(r) ? itemsAskedFor(r, HEAVY) : 0);

const get = (path: string, query: Record<string, string> = {}) =>
  requestsOf(proxy, () => call(handler as Handler, { method: 'GET', path, routeKey: `GET ${path}`, query, headers: { authorization: `Bearer ${token}` } }));

/** Every AI issue as stored, whole; the window as the list saw it before: in the activity range, superseded ones left out. */
async function window(days: number, now: Date): Promise<AiIssueRecord[]> {
  const all = await getAiIssues(ids);
  expect(all).toHaveLength(ISSUES);
  const since = windowStart(days, now).toISOString();
  return all.filter((i) => !i.superseded_by && activityKey(i) >= since);
}

/** Runs `work` with the clock stopped, so durations of Ongoing issues are the same for the route and the brute force. */
async function atNow<T>(work: (now: Date) => Promise<T>): Promise<T> {
  const now = new Date();
  vi.useFakeTimers({ toFake: ['Date'], now });
  try {
    return await work(now);
  } finally {
    vi.useRealTimers();
  }
}

describe('the AI issues list and KPIs read alert keys and texts only for the page answered', () => {
  it('a page answers what a brute-force computation over every stored issue does, reading alert keys and texts of its rows only', async () => {
    const cases: Record<string, string>[] = [
      { days: '30', page: '2', page_size: '5' },
      { days: '30', customer: 'Customer B', page: '2', page_size: '3' },
      { days: '30', cluster: 'cluster-1', page_size: '3' },
      { days: '3', status: 'Resolved', page_size: '4' },
    ];
    for (const query of cases) {
      await atNow(async (now) => {
        const q = IssueListQuery.parse(query);
        const inWindow = await window(q.days, now);
        const found = inWindow.filter((i) => matches(i, q)).sort(newestFirst);
        const start = (q.page - 1) * q.page_size;
        const { result, requests } = await get('/api/ai-issues', query);
        expect(result.statusCode, JSON.stringify(query)).toBe(200);
        expect(result.json).toEqual({
          issues: found.slice(start, start + q.page_size).map((i) => aiIssueView(i, now)),
          total: found.length,
          page: q.page,
          page_size: q.page_size,
          total_pages: Math.ceil(found.length / q.page_size),
          customers: distinct(inWindow.map((i) => i.customer_name)),
          clusters: distinct(inWindow.map((i) => i.cluster_name)),
          source: 'ai',
        });
        expect(result.json!.issues.length, JSON.stringify(query)).toBeGreaterThan(0);
        expect(result.json!.issues.some((i: { issue_id: string }) => SUPERSEDED.some((n) => ids[n] === i.issue_id))).toBe(false);
        const heavy = requests.reduce((sum, r) => sum + heavyAskedFor(r), 0);
        expect(heavy, JSON.stringify(query)).toBeLessThanOrEqual(result.json!.issues.length);
      });
    }
  });

  it('the KPIs read no alert keys or texts at all, and match a brute-force computation', async () => {
    for (const days of [30, 3]) {
      await atNow(async (now) => {
        const inWindow = await window(days, now);
        const { result, requests } = await get('/api/ai-issues/kpis', { days: String(days) });
        expect(result.statusCode).toBe(200);
        expect(result.json).toEqual({
          ...kpiCounts(inWindow, now, await activeUsernames()),
          total_alerts: inWindow.reduce((n, i) => n + i.alert_count, 0),
          source: 'ai',
        });
        expect(result.json!.total).toBe(days === 30 ? ISSUES - SUPERSEDED.length : inWindow.length);
        expect(requests.reduce((sum, r) => sum + heavyAskedFor(r), 0)).toBe(0);
      });
    }
  });
});
