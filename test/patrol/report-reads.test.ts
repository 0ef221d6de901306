// What the patrol list, KPIs and latest read from DynamoDB, seen on the wire through the proxy:
// a report's flagged clusters and customer summaries run to tens of kilobytes, and a window
// holds every report of up to 90 days (a scan every 6 hours), so the list reads what it shows
// only for the page it answers, the KPIs (also read by every Prometheus scrape) no text at all,
// and the latest one report whole. The answers still match a brute-force computation over
// every report as stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../functions/patrol.js';
import { createReport, finishReport, getReport, type PatrolReport } from '../../shared/db/patrol.js';
import { writeGrouping } from '../../shared/db/issues.js';
import { gatherInputs } from '../../shared/patrol/scan.js';
import { requestsOf, tableOf, type DynamoProxy, type WireRequest } from '../support/dynamo-proxy.js';
import { call, type Handler } from '../support/events.js';
import { attributesAsked, itemsAskedFor, useWatchedTables } from '../support/read-costs.js';
import { SCHEDULE_TRIGGER } from '../../shared/patrol/schedule.js';

const PARSED = ['clusters_flagged_parsed', 'customer_summaries_parsed', 'fleet_summary_parsed'];
const REPORTS = 14;
const ids: string[] = []; // newest first
const sortKeys: string[] = []; // each report's index sort key, `<created_at>#<report_id>`
let proxy: DynamoProxy;
let token: string;

beforeAll(async () => {
  ({ proxy, token } = await useWatchedTables());
  // 14 reports, one every 12 hours: completed and failed ones with long texts, and the newest
  // still running with no scan holding the lock (it stopped: the list marks it failed).
  for (let n = REPORTS - 1; n >= 0; n--) {
    const id = `report-${String(n).padStart(2, '0')}`;
    const { created_at } = await createReport(
      { report_id: id, report_type: 'scheduled', triggered_by: SCHEDULE_TRIGGER },
      new Date(Date.now() - n * 12 * 3_600_000 - 60_000),
    );
    ids.unshift(id);
    sortKeys.push(`${created_at}#${id}`);
    if (n === 0) continue;
    await finishReport(id, {
      status: n % 4 === 0 ? 'failed' : 'completed',
      error: n % 4 === 0 ? 'the model failed' : null,
      model: 'gpt-4o-mini',
      input_tokens: 1000 * n,
      output_tokens: 10 * n,
      total_tokens: 1010 * n,
      cost_usd: n / 1000,
      duration_seconds: n + 0.25,
      fleet_narrative: `narrative ${n}`,
      flagged_count: 40,
      fleet_summary_parsed: { total_clusters: 500, critical: 10, warning: 30, healthy: 460, headline: `headline ${n}` },
      clusters_flagged_parsed: Array.from({ length: 40 }, (_, c) => ({
        cluster_id: `c-${c}`,
        cluster_name: `cluster-${c}`,
        customer_name: 'Acme',
        severity: c % 2 ? 'Warning' : 'Critical',
        reason: `reason ${n}/${c} `.repeat(20),
        recommended_action: `action ${n}/${c} `.repeat(20),
      })),
      customer_summaries_parsed: [{ customer_name: 'Acme', clusters: 500, flagged: 40, summary: 'summary '.repeat(100) }],
    });
  }
});
afterAll(() => proxy.close());

/** The requests a call makes to the patrol table. */
const seen = <T>(work: () => Promise<T>) => requestsOf(proxy, work, (r) => tableOf(r).endsWith('patrol'));

/** How many reports' `attributes` a read may send back: a key range as many as it holds. */
const reportsAskedFor = (r: WireRequest, attributes: readonly string[]) =>
  itemsAskedFor(r, attributes, (q) => {
    if (!/BETWEEN/.test(q.input.KeyConditionExpression ?? '')) return Number.POSITIVE_INFINITY;
    const { ':lo': lo, ':hi': hi } = q.input.ExpressionAttributeValues;
    return sortKeys.filter((key) => key >= lo.S && key <= hi.S).length;
  });

const get = (path: string, routeKey: string, query: Record<string, string> = {}) =>
  call(handler as Handler, { method: 'GET', path, routeKey: `GET ${routeKey}`, query, headers: { authorization: `Bearer ${token}` } });

const stored = async (): Promise<PatrolReport[]> => Promise.all(ids.map(async (id) => (await getReport(id))!));
const listed = (r: PatrolReport) => ({
  report_id: r.report_id,
  created_at: r.created_at,
  report_type: r.report_type,
  status: r.status,
  fleet_narrative: r.fleet_narrative,
  flagged_count: r.flagged_count,
  model: r.model,
  cost_usd: r.cost_usd,
  total_tokens: r.total_tokens,
  duration_seconds: r.duration_seconds,
  triggered_by: r.triggered_by,
  error: r.error,
});

describe('the patrol list, KPIs and latest read whole reports only where they answer with them', () => {
  it('the KPIs read no text at all, and match a brute-force computation', async () => {
    const all = (await stored()).filter((r) => r.status !== 'running');
    const done = all.filter((r) => r.status === 'completed');
    const { result, requests } = await seen(() => get('/api/patrol/kpis/summary', '/api/patrol/kpis/summary'));
    expect(result.statusCode).toBe(200);
    expect(result.json).toMatchObject({
      total_reports: done.length,
      total_tokens: all.reduce((s, r) => s + r.total_tokens, 0),
      total_cost_usd: Math.round(all.reduce((s, r) => s + r.cost_usd, 0) * 1e6) / 1e6,
      avg_duration_s: Math.round((done.reduce((s, r) => s + r.duration_seconds, 0) / done.length) * 100) / 100,
      latest_report_at: done[0]!.created_at,
    });
    expect(requests.reduce((n, r) => n + reportsAskedFor(r, [...PARSED, 'fleet_narrative']), 0)).toBe(0);
  });

  it('a page of 4 reads what it shows of 4 reports and no parsed lists; the stopped scan on it is answered failed', async () => {
    for (const [page, size] of [
      [1, 4],
      [2, 4],
      [4, 4],
    ] as const) {
      const { result, requests } = await seen(() => get('/api/patrol', '/api/patrol', { page: String(page), page_size: String(size) }));
      expect(result.statusCode).toBe(200);
      const want = (await stored()).slice((page - 1) * size, page * size).map(listed);
      expect(result.json!.total).toBe(REPORTS);
      expect(result.json!.reports).toEqual(want);
      if (page === 1) expect(want[0]).toMatchObject({ report_id: 'report-00', status: 'failed', error: expect.stringMatching(/stopped/) });
      expect(requests.reduce((n, r) => n + reportsAskedFor(r, PARSED), 0)).toBe(0);
      expect(requests.reduce((n, r) => n + reportsAskedFor(r, ['fleet_narrative']), 0)).toBeLessThanOrEqual(want.length);
    }
  });

  it('the latest reads one report whole', async () => {
    const { result, requests } = await seen(() => get('/api/patrol/latest', '/api/patrol/latest'));
    expect(result.statusCode).toBe(200);
    const latest = (await stored()).find((r) => r.status === 'completed')!;
    expect(result.json).toMatchObject({ report_id: latest.report_id, clusters_flagged_parsed: latest.clusters_flagged_parsed });
    expect(requests.reduce((n, r) => n + reportsAskedFor(r, PARSED), 0)).toBe(1);
  });
});

describe("the scan's inputs", () => {
  it('read the open issues as summaries: no alert names, notes or texts', async () => {
    const now = new Date();
    for (let n = 0; n < 5; n++) {
      await writeGrouping(
        {
          issue_id: `open-${n}`,
          issue_name: `Disk ${n}`,
          severity: 'Critical',
          status: 'Ongoing',
          cluster_id: `open-cluster-${n % 2}`,
          alert_count: 50,
          alert_names: Array.from({ length: 50 }, (_, k) => `Alert_${n}_${k}_${'x'.repeat(100)}`),
          first_seen: new Date(now.getTime() - 3_600_000).toISOString(),
          last_seen: now.toISOString(),
          resolved_at: null,
          group_key: `g${n}`,
        },
        { cluster_name: `open-${n % 2}`, customer_name: 'Acme' },
        null,
      );
    }
    const { result, requests } = await requestsOf(
      proxy,
      () => gatherInputs(now),
      (r) => tableOf(r).endsWith('issues'),
    );
    expect(requests.length).toBeGreaterThan(0);
    for (const r of requests)
      expect(attributesAsked(r)?.filter((f) => ['alert_names', 'notes', 'alert_keys', 'ai_reasoning', 'ai_summary'].includes(f))).toEqual([]);
    expect(result.open_issues).toBe(5);
  });
});
