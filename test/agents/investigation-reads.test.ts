// What the investigations list and KPIs read from DynamoDB, seen on the wire through the proxy:
// a summary's root cause and recommended actions run to kilobytes each and a window holds every
// investigation of up to 365 days, so the list reads those texts only for the page it answers and
// the KPIs (also read by every Prometheus scrape) never. The answers still match a brute-force
// computation over every summary. Likewise pending-tasks reads whole only the 50 tasks it shows,
// however many are open (one per cluster: thousands in an outage).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PENDING_TASKS_SHOWN } from '../../shared/agents/queries.js';
import { handler } from '../../functions/investigations.js';
import { leaseMs } from '../../shared/agents/tasks.js';
import { claimTask, completeTask, createTask, listInvestigationsSince, listOpenTasks, type InvestigationSummary } from '../../shared/db/investigations.js';
import { requestsOf, tableOf, type DynamoProxy, type WireRequest } from '../support/dynamo-proxy.js';
import { call, type Handler } from '../support/events.js';
import { itemsAskedFor, useWatchedTables } from '../support/read-costs.js';

const SEVERITIES = ['critical', 'warning', 'info'] as const;
const TEXTS = ['root_cause', 'recommended_actions', 'full_report'];
let proxy: DynamoProxy;
let token: string;

beforeAll(async () => {
  ({ proxy, token } = await useWatchedTables());
  // 24 investigations over the last 12 days, three customers, every severity, long texts.
  for (let n = 0; n < 24; n++) {
    const at = new Date(Date.now() - n * 12 * 3_600_000).toISOString();
    const task = {
      task_id: randomUUID(),
      cluster_id: randomUUID(),
      cluster_name: `cluster-${n}`,
      customer_name: `Customer ${'ABC'[n % 3]}`,
      customer_tier: 'S',
      trigger_reason: 'test',
      priority: 300,
      created_at: at,
    };
    expect(await createTask(task, at)).toBe(true);
    const claimed = (await claimTask(task.task_id, 'reads-test', leaseMs()))!;
    await completeTask(claimed, {
      investigation_id: randomUUID(),
      task_id: task.task_id,
      cluster_id: task.cluster_id,
      cluster_name: task.cluster_name,
      customer_name: task.customer_name,
      severity: SEVERITIES[n % 3]!,
      confidence: (n % 10) / 10,
      root_cause: `cause ${n} `.repeat(300),
      recommended_actions: `- act ${n}\n`.repeat(300),
      full_report: `# report ${n}`,
      model: 'rules',
      input_tokens: n,
      output_tokens: 2 * n,
      total_tokens: 3 * n,
      cost_usd: n / 1000,
      duration_seconds: n + 0.5,
      created_at: at,
    });
  }
});
afterAll(() => proxy.close());

/** The requests a call makes to DynamoDB. */
const seen = <T>(work: () => Promise<T>) => requestsOf(proxy, work);

/** How many investigations' free texts a request may send back: a query filtered to ids, as many as it names. */
const textsAskedFor = (r: WireRequest) =>
  tableOf(r).endsWith('investigations')
    ? itemsAskedFor(r, TEXTS, (q) => /investigation_id IN \(([^)]*)\)/.exec(q.input.FilterExpression ?? '')?.[1]?.split(',').length ?? Number.POSITIVE_INFINITY)
    : 0;

const get = (path: string, routeKey: string, query: Record<string, string> = {}) =>
  call(handler as Handler, { method: 'GET', path, routeKey: `GET ${routeKey}`, query, headers: { authorization: `Bearer ${token}` } });

describe('the investigations list and KPIs read the free texts only for the page answered', () => {
  it('a page of 5 reads the texts of at most 5 investigations, and answers what a brute-force computation over every summary does', async () => {
    const all = await listInvestigationsSince(new Date(Date.now() - 30 * 86_400_000));
    expect(all).toHaveLength(24);
    const cases: { query: Record<string, string>; expected: InvestigationSummary[] }[] = [
      { query: { page: '2', page_size: '5' }, expected: all },
      { query: { severity: 'warning', page: '2', page_size: '3' }, expected: all.filter((i) => i.severity === 'warning') },
      { query: { customer: 'customer b', page_size: '5' }, expected: all.filter((i) => i.customer_name === 'Customer B') },
      { query: { days: '3', page_size: '5' }, expected: all.filter((i) => Date.parse(i.created_at) >= Date.now() - 3 * 86_400_000) },
    ];
    for (const { query, expected } of cases) {
      const { result, requests } = await seen(() => get('/api/investigations', '/api/investigations', query));
      expect(result.statusCode).toBe(200);
      const page = Number(query.page ?? 1);
      const size = Number(query.page_size);
      const want = expected.slice((page - 1) * size, page * size);
      expect(result.json!.total).toBe(expected.length);
      expect(result.json!.investigations).toEqual(want);
      const texts = requests.reduce((sum, r) => sum + textsAskedFor(r), 0);
      expect(texts, JSON.stringify(query)).toBeLessThanOrEqual(size);
    }
  });

  it('the KPIs read no free text at all, and match a brute-force computation', async () => {
    const all = await listInvestigationsSince(new Date(Date.now() - 30 * 86_400_000));
    const { result, requests } = await seen(() => get('/api/investigations/kpis', '/api/investigations/kpis'));
    expect(result.statusCode).toBe(200);
    expect(result.json).toMatchObject({
      total_investigations: 24,
      critical_count: 8,
      warning_count: 8,
      info_count: 8,
      total_tokens: all.reduce((s, i) => s + i.total_tokens, 0),
      total_cost_usd: Math.round(all.reduce((s, i) => s + i.cost_usd, 0) * 1e6) / 1e6,
    });
    expect(result.json!.avg_confidence).toBeCloseTo(all.reduce((s, i) => s + i.confidence, 0) / 24, 3);
    expect(result.json!.avg_duration_s).toBeCloseTo(all.reduce((s, i) => s + i.duration_seconds, 0) / 24, 2);
    expect(requests.reduce((sum, r) => sum + textsAskedFor(r), 0)).toBe(0);
  });
});

describe('pending-tasks reads whole only the tasks it shows', () => {
  beforeAll(async () => {
    // 70 open tasks, every priority different; some running.
    const now = Date.now();
    for (let n = 0; n < 70; n++) {
      const at = new Date(now - n * 60_000).toISOString();
      const task = {
        task_id: randomUUID(),
        cluster_id: randomUUID(),
        cluster_name: `open-${n}`,
        customer_name: 'Customer O',
        customer_tier: 'A',
        trigger_reason: `reason ${n} `.repeat(50),
        priority: 100 + ((n * 37) % 300),
        created_at: at,
      };
      expect(await createTask(task, at)).toBe(true);
      if (n % 5 === 0) await claimTask(task.task_id, 'reads-test', leaseMs());
    }
  });

  it('answers the 50 most urgent and counts all 70, as a brute-force read of every open task does', async () => {
    const open = await listOpenTasks();
    expect(open).toHaveLength(70);
    const { result, requests } = await seen(() => get('/api/investigations/pending-tasks', '/api/investigations/pending-tasks'));
    expect(result.statusCode).toBe(200);
    expect(result.json!.total).toBe(70);
    expect(result.json!.tasks).toHaveLength(PENDING_TASKS_SHOWN);
    expect(result.json!.tasks.map((t: { task_id: string }) => t.task_id)).toEqual(open.slice(0, PENDING_TASKS_SHOWN).map((t) => t.task_id));
    // Whole task items asked for: a query of the table without a projection takes up to its Limit (none: every one).
    const whole = requests
      .filter((r) => r.operation === 'Query' && String(r.input.TableName).endsWith('investigations') && !r.input.ProjectionExpression)
      .reduce((sum, r) => sum + (r.input.Limit ?? Number.POSITIVE_INFINITY), 0);
    expect(whole).toBeLessThanOrEqual(PENDING_TASKS_SHOWN);
  });
});
