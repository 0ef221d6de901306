// The chat assistant's read-only SQL over a fleet snapshot (shared/chat/sql.ts),
// with hand-made snapshots (no DynamoDB): answers across tables, the
// statement check and query_only, row/cell/time limits (a runaway query is
// stopped and the database stays usable), SQLite errors, the schema text, the
// load time of a 1,000-cluster fleet, and a Lambda-style bundle.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import initSqlJs from 'sql.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from 'esbuild';
import { BUNDLE } from '../../infra/bundling.js';
import type { AlertRecord } from '../../shared/db/alerts.js';
import type { ClusterRecord } from '../../shared/db/clusters.js';
import type { IssueRecord } from '../../shared/db/issues.js';
import type { StoredRollup } from '../../shared/db/metrics.js';
import { METRIC_KEYS, type MetricKey } from '../../shared/fleet/records.js';
import type { MetricRollup } from '../../shared/fleet/rollup.js';
import type { FleetClusterScore } from '../../shared/scoring/fleet-score.js';
import type { RiskSnapshot } from '../../shared/scoring/risk.js';
import { statementVerb } from '../../shared/chat/sql-guard.js';
import { loadSnapshot, lockDown } from '../../shared/chat/sql-load.js';
import { packSnapshot } from '../../shared/chat/sql-snapshot.js';
import { TABLES } from '../../shared/chat/sql-tables.js';
import { openFleetDatabase, SQL_LIMITS, SQL_RUNTIME_FILES, SqlRefused, type FleetDatabase, type FleetSnapshot } from '../../shared/chat/sql.js';

// ---------------------------------------------------------------- a small fleet

const ORDERS = '11111111-1111-4111-8111-111111111111';
const ANALYTICS = '22222222-2222-4222-8222-222222222222';
const BILLING = '33333333-3333-4333-8333-333333333333';

function cluster(
  cluster_id: string,
  cluster_name: string,
  customer_name: string,
  customer_tier: 'S' | 'A' | 'B',
  region: string,
  node_count: number,
): ClusterRecord {
  return {
    cluster_id,
    cluster_name,
    customer_name,
    account_id: `acct-${customer_name}`,
    account_name: `${customer_name} prod`,
    email: `ops@${customer_name.toLowerCase()}.example`,
    customer_tier,
    cluster_type: 'shared-data',
    region,
    engine_version: '3.3.2',
    resource_state: 'running',
    node_count,
    created_at: '2026-01-05T10:00:00.000Z',
    updated_at: '2026-11-19T08:00:00.000Z',
  };
}

function score(
  c: ClusterRecord,
  tierAdjusted: number,
  classification: FleetClusterScore['classification'],
  over: Partial<FleetClusterScore> = {},
): FleetClusterScore {
  return {
    cluster_id: c.cluster_id,
    cluster_name: c.cluster_name,
    customer_name: c.customer_name,
    account_id: c.account_id,
    customer_tier: c.customer_tier,
    overall_score: tierAdjusted + 5,
    metrics_score: tierAdjusted,
    alerts_score: 100,
    tier_adjusted_score: tierAdjusted,
    classification,
    top_risk: 'None',
    cluster_type: c.cluster_type,
    region: c.region,
    dimension_scores: [],
    risk_reasons: [],
    suggested_actions: [],
    firing_alert_count_7d: 0,
    metrics: { compaction_score: 3, disk_used_pct: 40, query_errors_7d: 0, query_error_pct: 0, qps: 100, node_count: c.node_count },
    ...over,
  };
}

const m = (min: number, max: number, sum: number, count: number, last: number, last_at: string): MetricRollup => ({ min, max, sum, count, last, last_at });

function issue(over: Partial<IssueRecord> & Pick<IssueRecord, 'issue_id' | 'cluster_id'>): IssueRecord {
  return {
    group_key: `cluster=${over.cluster_id}|alert_name=DiskUsageHigh`,
    issue_name: 'DiskUsageHigh',
    severity: 'Critical',
    status: 'Ongoing',
    alert_count: 1,
    alert_names: ['DiskUsageHigh'],
    first_seen: '2026-11-19T01:00:00.000Z',
    last_seen: '2026-11-19T01:00:00.000Z',
    resolved_at: null,
    cluster_name: '',
    customer_name: '',
    triage_status: '',
    disposition_status: '',
    assignee: '',
    notes: '',
    ticket_key: '',
    ticket_url: '',
    updated_at: '',
    updated_by: '',
    grouped_at: '2026-11-20T00:00:00.000Z',
    grouping_version: 3,
    triage_version: 2,
    superseded_by: null,
    ticket_claim: 'claim-token',
    ticket_claimed_at: '2026-11-20T00:00:00.000Z',
    ...over,
  };
}

function alert(
  alert_id: string,
  cluster_id: string,
  alert_name: string,
  starts_at: string,
  ends_at: string | null,
  labels: Record<string, string> = {},
): AlertRecord {
  return {
    alert_id,
    cluster_id,
    alert_name,
    severity: labels.severity ?? 'warning',
    status: ends_at ? 'Resolved' : 'Firing',
    starts_at,
    ends_at,
    fingerprint: `fp-${alert_name}`,
    labels: { alertname: alert_name, ...labels },
    annotations: { summary: `${alert_name} on ${cluster_id}` },
    summary: `${alert_name} on ${cluster_id}`,
    detail: 'details',
    dashboard_url: `https://grafana.example/d/${cluster_id}`,
    received_at: starts_at,
    updated_at: ends_at ?? starts_at,
  };
}

function smallFleet(): FleetSnapshot {
  const orders = cluster(ORDERS, 'orders-prod', 'Acme', 'S', 'us-east-1', 6);
  const analytics = cluster(ANALYTICS, 'analytics-dev', 'Beta', 'B', 'eu-west-1', 3);
  const billing = cluster(BILLING, 'billing-prod', 'Acme', 'A', 'us-east-1', 9);
  const at = (day: string) => `${day}T23:55:00.000Z`;
  return {
    clusters: [orders, analytics, billing],
    scores: [
      score(orders, 41.5, 'Critical', {
        top_risk: 'Disk Usage (30)',
        firing_alert_count_7d: 2,
        dimension_scores: [
          { name: 'Disk Usage', metric_key: 'disk_used_pct', score: 30, value: 93.5, weight: 3, status: 'critical' },
          { name: 'Query Errors', metric_key: 'query_error_pct', score: 80, value: 1.2, weight: 2, status: 'warning' },
        ],
        risk_reasons: ['Disk Usage at 93.5 (red ≥ 90)', '2 alerts fired in the last 7 days'],
        suggested_actions: ['Expand storage, or clean up old partitions'],
        metrics: { compaction_score: 12, disk_used_pct: 93.5, query_errors_7d: 40, query_error_pct: 1.2, qps: 1200, node_count: 6 },
      }),
      score(analytics, 96, 'Healthy', {
        metrics: { compaction_score: null, disk_used_pct: null, query_errors_7d: null, query_error_pct: null, qps: 15, node_count: 3 },
      }),
      score(billing, 72, 'Warning', {
        top_risk: 'Disk Usage (70)',
        dimension_scores: [{ name: 'Disk Usage', metric_key: 'disk_used_pct', score: 70, value: 82, weight: 3, status: 'warning' }],
      }),
    ],
    risks: [
      {
        cluster_id: ORDERS,
        cluster_name: 'orders-prod',
        customer_name: 'Acme',
        risk_level: 'Critical',
        overall_score: 46.5,
        risk_signals: ['disk_used_pct max 93.5 ≥ critical 90'],
        suggested_actions: ['Expand storage'],
        metrics: { disk_used_pct: { value: 93.5, status: 'critical' }, qps: { value: 1200, status: 'healthy' } },
      },
      {
        cluster_id: ANALYTICS,
        cluster_name: 'analytics-dev',
        customer_name: 'Beta',
        risk_level: 'Healthy',
        overall_score: 101,
        risk_signals: [],
        suggested_actions: [],
        metrics: {},
      },
      {
        cluster_id: BILLING,
        cluster_name: 'billing-prod',
        customer_name: 'Acme',
        risk_level: 'Warning',
        overall_score: 77,
        risk_signals: ['disk_used_pct max 82 ≥ warning 80'],
        suggested_actions: ['Plan storage'],
        metrics: { disk_used_pct: { value: 82, status: 'warning' } },
      },
    ] satisfies RiskSnapshot[],
    rollups: [
      {
        cluster_id: ORDERS,
        day: '2026-11-18',
        metrics: { disk_used_pct: m(80, 85, 830, 10, 84, at('2026-11-18')), qps: m(900, 1300, 11000, 10, 1000, at('2026-11-18')) },
      },
      {
        cluster_id: ORDERS,
        day: '2026-11-19',
        metrics: { disk_used_pct: m(85, 91, 880, 10, 90, at('2026-11-19')), qps: m(1000, 1400, 12000, 10, 1200, at('2026-11-19')) },
      },
      // The same cluster and day twice: the later one is the one stored.
      { cluster_id: ORDERS, day: '2026-11-20', metrics: { disk_used_pct: m(1, 2, 3, 2, 1, at('2026-11-20')) } },
      { cluster_id: ANALYTICS, day: '2026-11-19', metrics: { qps: m(5, 25, 150, 10, 15, at('2026-11-19')) } },
      { cluster_id: BILLING, day: '2026-11-19', metrics: { disk_used_pct: m(78, 82, 800, 10, 81, at('2026-11-19')) } },
      {
        cluster_id: ORDERS,
        day: '2026-11-20',
        metrics: { disk_used_pct: m(90, 93.5, 920, 10, 93, at('2026-11-20')), qps: m(1100, 1500, 12500, 10, 1250, at('2026-11-20')) },
      },
    ],
    alerts: [
      alert('a1', ORDERS, 'DiskUsageHigh', '2026-11-19T01:00:00.000Z', null, { service: 'storage', severity: 'critical' }),
      alert('a2', ORDERS, 'DiskUsageHigh', '2026-11-17T01:00:00.000Z', '2026-11-17T03:30:00.000Z', { service: 'storage', severity: 'critical' }),
      alert('a3', BILLING, 'SlowQueries', '2026-11-18T05:00:00.000Z', '2026-11-18T05:20:00.000Z', { service: 'query' }),
    ],
    issues: [
      issue({
        issue_id: 'iss-orders-disk',
        cluster_id: ORDERS,
        cluster_name: 'orders-prod',
        customer_name: 'Acme',
        alert_count: 2,
        first_seen: '2026-11-17T01:00:00.000Z',
        last_seen: '2026-11-19T01:00:00.000Z',
        triage_status: 'investigating',
        assignee: 'dana',
        ticket_key: 'OPS-7',
        ticket_url: 'https://jira.example/OPS-7',
        updated_at: '2026-11-19T09:00:00.000Z',
        updated_by: 'dana',
      }),
      issue({
        issue_id: 'iss-billing-slow',
        cluster_id: BILLING,
        cluster_name: 'billing-prod',
        customer_name: 'Acme',
        severity: 'Warning',
        status: 'Resolved',
        issue_name: 'SlowQueries',
        alert_names: ['SlowQueries'],
        group_key: `cluster=${BILLING}|alert_name=SlowQueries`,
        first_seen: '2026-11-18T05:00:00.000Z',
        last_seen: '2026-11-18T05:00:00.000Z',
        resolved_at: '2026-11-18T05:20:00.000Z',
      }),
    ],
  };
}

/** The rejection of a query, which must be a SqlRefused. */
async function refusal(db: FleetDatabase, sql: string, options?: { rowLimit?: number; timeoutMs?: number }): Promise<SqlRefused> {
  const error = await db.query(sql, options).then(
    (result) => {
      throw new Error(`expected a refusal of ${JSON.stringify(sql)}, got ${JSON.stringify(result)}`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SqlRefused);
  return error as SqlRefused;
}

/** A runaway query: counts to 10^12 (hours). */
const RUNAWAY = 'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1e12) SELECT count(*) FROM n';

// ---------------------------------------------------------------- tests

/** ≈ 0.8 s on a quiet 2-core machine (printed); generous so a busy CI machine does not fail it (the test files run in parallel). */
const LOAD_BUDGET_MS = 5000;

describe('run_sql over a small fleet', () => {
  let db: FleetDatabase;
  beforeAll(async () => {
    db = await openFleetDatabase(smallFleet());
  });
  afterAll(async () => {
    await db?.close();
  });

  describe('answers', () => {
    it('joins scores to the inventory: tier-S critical clusters with their region', async () => {
      const result = await db.query(
        "SELECT s.cluster_name, c.region, s.tier_adjusted_score, s.top_risk FROM scores s JOIN clusters c ON c.cluster_id = s.cluster_id WHERE s.classification = 'Critical' AND c.customer_tier = 'S'",
      );
      expect(result).toMatchObject({
        columns: ['cluster_name', 'region', 'tier_adjusted_score', 'top_risk'],
        rows: [['orders-prod', 'us-east-1', 41.5, 'Disk Usage (30)']],
        row_count: 1,
        truncated: false,
      });
      expect(result.duration_ms).toBeGreaterThanOrEqual(0);
    });

    it('counts alerts and open issues per customer across clusters, alerts and issues', async () => {
      const result = await db.query(`
        SELECT c.customer_name,
               count(DISTINCT c.cluster_id) AS clusters,
               (SELECT count(*) FROM alerts a JOIN clusters c2 USING (cluster_id) WHERE c2.customer_name = c.customer_name) AS alerts,
               (SELECT count(*) FROM alerts a JOIN clusters c2 USING (cluster_id) WHERE c2.customer_name = c.customer_name AND a.status = 'Firing') AS firing,
               (SELECT count(*) FROM issues i WHERE i.customer_name = c.customer_name AND i.status = 'Ongoing') AS open_issues
        FROM clusters c GROUP BY c.customer_name ORDER BY c.customer_name`);
      expect(result.rows).toEqual([
        ['Acme', 2, 3, 1, 1],
        ['Beta', 1, 0, 0, 0],
      ]);
    });

    it('metric_daily: one row per cluster, day and metric; avg = sum / count; a repeated cluster-day keeps the later rollup', async () => {
      const count = await db.query('SELECT count(*) FROM metric_daily');
      expect(count.rows).toEqual([[8]]); // orders 3 days × 2 metrics (its 2026-11-20 twice, kept once), analytics 1, billing 1
      const day = await db.query(
        `SELECT metric_key, min, max, avg, sum, count, last, last_at FROM metric_daily WHERE cluster_id = '${ORDERS}' AND day = '2026-11-20' ORDER BY metric_key`,
      );
      expect(day.rows).toEqual([
        ['disk_used_pct', 90, 93.5, 92, 920, 10, 93, '2026-11-20T23:55:00.000Z'],
        ['qps', 1100, 1500, 1250, 12500, 10, 1250, '2026-11-20T23:55:00.000Z'],
      ]);
      const peak = await db.query(
        "SELECT c.cluster_name, max(m.max) AS peak FROM metric_daily m JOIN clusters c USING (cluster_id) WHERE m.metric_key = 'disk_used_pct' GROUP BY c.cluster_name ORDER BY peak DESC",
      );
      expect(peak.rows).toEqual([
        ['orders-prod', 93.5],
        ['billing-prod', 82],
      ]);
    });

    it('flattens lists to JSON text: json_each over reasons, json_extract over labels, LIKE over signals', async () => {
      const reasons = await db.query(`SELECT r.value FROM scores s, json_each(s.risk_reasons) r WHERE s.cluster_id = '${ORDERS}'`);
      expect(reasons.rows).toEqual([['Disk Usage at 93.5 (red ≥ 90)'], ['2 alerts fired in the last 7 days']]);
      const labels = await db.query(
        "SELECT alert_id, json_extract(labels, '$.service') FROM alerts WHERE json_extract(labels, '$.severity') = 'critical' ORDER BY alert_id",
      );
      expect(labels.rows).toEqual([
        ['a1', 'storage'],
        ['a2', 'storage'],
      ]);
      const risky = await db.query("SELECT cluster_name, signal_count FROM risks WHERE risk_signals LIKE '%disk_used_pct%' ORDER BY cluster_name");
      expect(risky.rows).toEqual([
        ['billing-prod', 1],
        ['orders-prod', 1],
      ]);
    });

    it('score_dimensions and risk_metrics hold the per-metric detail', async () => {
      const dims = await db.query(
        "SELECT c.cluster_name, d.score, d.value, d.status FROM score_dimensions d JOIN clusters c USING (cluster_id) WHERE d.metric_key = 'disk_used_pct' ORDER BY d.score",
      );
      expect(dims.rows).toEqual([
        ['orders-prod', 30, 93.5, 'critical'],
        ['billing-prod', 70, 82, 'warning'],
      ]);
      const metrics = await db.query(`SELECT metric_key, value, status FROM risk_metrics WHERE cluster_id = '${ORDERS}' ORDER BY metric_key`);
      expect(metrics.rows).toEqual([
        ['disk_used_pct', 93.5, 'critical'],
        ['qps', 1200, 'healthy'],
      ]);
    });

    it('missing metrics are NULL; issues carry triage but no bookkeeping', async () => {
      const nulls = await db.query(`SELECT disk_used_pct, qps, node_count FROM scores WHERE cluster_id = '${ANALYTICS}'`);
      expect(nulls.rows).toEqual([[null, 15, 3]]);
      const issue = await db.query(
        "SELECT issue_name, severity, status, alert_count, alert_names, triage_status, assignee, ticket_key, triage_updated_by FROM issues WHERE issue_id = 'iss-orders-disk'",
      );
      expect(issue.rows).toEqual([['DiskUsageHigh', 'Critical', 'Ongoing', 2, '["DiskUsageHigh"]', 'investigating', 'dana', 'OPS-7', 'dana']]);
      const columns = await db.query("SELECT name FROM pragma_table_info('issues')");
      const names = columns.rows.map((r) => r[0]);
      for (const hidden of ['grouping_version', 'triage_version', 'ticket_claim', 'ticket_claimed_at', 'superseded_by', 'grouped_at'])
        expect(names).not.toContain(hidden);
    });
  });

  describe('read-only', () => {
    const writes = [
      ["INSERT INTO clusters (cluster_id) VALUES ('x')", 'INSERT'],
      ["UPDATE scores SET classification = 'Healthy'", 'UPDATE'],
      ['DELETE FROM alerts', 'DELETE'],
      ["REPLACE INTO clusters (cluster_id) VALUES ('x')", 'REPLACE'],
      ['DROP TABLE clusters', 'DROP'],
      ['CREATE TABLE notes (x TEXT)', 'CREATE'],
      ['CREATE TEMP VIEW v AS SELECT 1', 'CREATE'],
      ['ALTER TABLE clusters ADD COLUMN x TEXT', 'ALTER'],
      ["ATTACH DATABASE 'other.db' AS other", 'ATTACH'],
      ['DETACH DATABASE temp', 'DETACH'],
      ['PRAGMA query_only = 0', 'PRAGMA'],
      ['PRAGMA table_info(clusters)', 'PRAGMA'],
      ['VACUUM', 'VACUUM'],
      ['REINDEX', 'REINDEX'],
      ['ANALYZE', 'ANALYZE'],
      ['BEGIN', 'BEGIN'],
      ['COMMIT', 'COMMIT'],
      ['ROLLBACK', 'ROLLBACK'],
      ['SAVEPOINT s1', 'SAVEPOINT'],
      ['EXPLAIN SELECT 1', 'EXPLAIN'],
      ['WITH gone AS (SELECT cluster_id FROM clusters) DELETE FROM clusters WHERE cluster_id IN gone', 'DELETE'],
      ['WITH RECURSIVE x(n) AS (SELECT 1) INSERT INTO clusters (cluster_id) SELECT n FROM x', 'INSERT'],
      ['  /* a comment */ -- and another\n  delete from issues', 'DELETE'],
    ] as const;

    it.each(writes)('refuses %j, saying what is allowed', async (sql, verb) => {
      const error = await refusal(db, sql);
      expect(error.message).toContain(verb);
      expect(error.message).toMatch(/only one read-only SELECT statement/i);
    });

    it('refuses several statements, even when each is a SELECT', async () => {
      expect((await refusal(db, 'SELECT 1; DROP TABLE clusters')).message).toMatch(/one statement per call: this text holds 2/);
      expect((await refusal(db, 'SELECT 1; SELECT 2; SELECT 3')).message).toMatch(/holds 3/);
      expect((await refusal(db, "SELECT ';'; DELETE FROM alerts -- ;")).message).toMatch(/holds 2/);
    });

    it('accepts a ; inside a string literal, a quoted name or a comment, and a trailing ;', async () => {
      const result = await db.query(
        "SELECT 'a;b' AS \"x;y\", cluster_name FROM clusters WHERE cluster_name <> 'x''; DROP TABLE clusters; --' ORDER BY 2 LIMIT 1; -- done;",
      );
      expect(result.columns).toEqual(['x;y', 'cluster_name']);
      expect(result.rows).toEqual([['a;b', 'analytics-dev']]);
      expect((await db.query('/* ; */ WITH t AS (SELECT 1 AS one) SELECT one FROM t;;')).rows).toEqual([[1]]);
    });

    it('refuses empty text and text that is not a statement', async () => {
      expect((await refusal(db, '   ')).message).toMatch(/No SQL given/);
      expect((await refusal(db, '-- just a comment')).message).toMatch(/no SQL statement/);
      expect((await refusal(db, ';SELECT 1')).message).toMatch(/not a SELECT/);
    });

    it('nothing changed, and query_only is still on (a PRAGMA after a SELECT is never even prepared)', async () => {
      await refusal(db, 'SELECT 1; PRAGMA query_only = 0');
      await refusal(db, 'PRAGMA query_only = 0');
      expect((await db.query('SELECT * FROM pragma_query_only')).rows).toEqual([[1]]);
      expect((await db.query('SELECT (SELECT count(*) FROM clusters), (SELECT count(*) FROM alerts), (SELECT count(*) FROM issues)')).rows).toEqual([
        [3, 3, 2],
      ]);
    });
  });

  describe('limits', () => {
    const numbers = (n: number) => `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ${n}) SELECT x FROM n`;

    it(`returns at most ${SQL_LIMITS.rowLimit} rows by default and says when there were more`, async () => {
      const many = await db.query(numbers(1000));
      expect(many).toMatchObject({ row_count: SQL_LIMITS.rowLimit, truncated: true });
      expect(many.rows.at(-1)).toEqual([SQL_LIMITS.rowLimit]);
      const exact = await db.query(numbers(SQL_LIMITS.rowLimit));
      expect(exact).toMatchObject({ row_count: SQL_LIMITS.rowLimit, truncated: false });
      const few = await db.query(numbers(1000), { rowLimit: 5 });
      expect(few).toMatchObject({ rows: [[1], [2], [3], [4], [5]], row_count: 5, truncated: true });
    });

    it(`cuts text cells at ${SQL_LIMITS.cellChars} characters and describes blobs`, async () => {
      const result = await db.query("SELECT printf('%.2000c', 'x') AS long, 'short' AS short, randomblob(16) AS blob, 42 AS n");
      const [long, short, blob, n] = result.rows[0]!;
      expect(typeof long === 'string' && long.length).toBe(SQL_LIMITS.cellChars);
      expect(String(long).endsWith('…')).toBe(true);
      expect([short, blob, n]).toEqual(['short', '<blob of 16 bytes>', 42]);
    });

    it(`refuses SQL longer than ${SQL_LIMITS.maxSqlChars} characters`, async () => {
      const error = await refusal(db, `SELECT 1 ${' '.repeat(SQL_LIMITS.maxSqlChars)}`);
      expect(error.message).toMatch(new RegExp(`limit is ${SQL_LIMITS.maxSqlChars}`));
    });
  });

  describe('errors', () => {
    it('an unknown column or table: SQLite says which, and the hint names the tables', async () => {
      const column = await refusal(db, 'SELECT health FROM scores');
      expect(column.message).toMatch(/no such column: health/);
      expect(column.message).toMatch(/clusters, scores, score_dimensions, risks, risk_metrics, metric_daily, alerts, issues/);
      expect((await refusal(db, 'SELECT * FROM cluster')).message).toMatch(/no such table: cluster/);
      expect((await refusal(db, 'SELECT cluster_id FROM scores JOIN clusters USING (customer_name) JOIN risks ON 1')).message).toMatch(
        /ambiguous column name: cluster_id/,
      );
    });

    it("a query that needs too much memory is refused (SQLite's heap is capped); the database still answers", async () => {
      const error = await refusal(db, "SELECT length(zeroblob(500000000) || 'x')");
      expect(error.message).toMatch(/out of memory.*filter and aggregate/);
      expect((await db.query('SELECT count(*) FROM alerts')).rows).toEqual([[3]]);
    });

    it("a syntax error: SQLite's message and a pointer to the schema", async () => {
      const error = await refusal(db, 'SELECT FROM WHERE');
      expect(error.message).toMatch(/syntax error/);
      expect(error.message).toMatch(/schema/);
    });
  });

  describe('schema', () => {
    it('names every table and every column the database has, with types, and what the snapshot holds', async () => {
      const columns = await db.query(
        "SELECT t.name, c.name, c.type FROM sqlite_temp_schema t, pragma_table_info(t.name) c WHERE t.type = 'table' ORDER BY t.name, c.cid",
        { rowLimit: 1000 },
      );
      const tables = new Set(columns.rows.map((r) => r[0]));
      expect([...tables].sort()).toEqual(TABLES.map((t) => t.name).sort());
      for (const [table, column, type] of columns.rows) {
        expect(db.schema).toContain(`TABLE ${table} (`);
        expect(db.schema).toContain(`  ${column} ${type}: `);
      }
      expect(db.schema).toContain('TABLE clusters (3 rows)');
      expect(db.schema).toContain('TABLE metric_daily (8 rows)');
      expect(db.schema).toContain('metric keys present: disk_used_pct, qps');
      expect(db.schema).toContain('days present: 2026-11-18 to 2026-11-20');
    });

    it('its example queries run', async () => {
      const examples = db.schema
        .slice(db.schema.indexOf('EXAMPLES'))
        .split(/;\n/)
        .map((s) => s.replace(/^EXAMPLES\n/, '').trim())
        .filter(Boolean);
      expect(examples.length).toBeGreaterThanOrEqual(2);
      for (const example of examples) await expect(db.query(example)).resolves.toMatchObject({ truncated: false });
    });
  });

  describe('time limit', () => {
    it(`stops a runaway query after ${SQL_LIMITS.timeoutMs} ms; the next query works`, async () => {
      const started = performance.now();
      const error = await refusal(db, RUNAWAY);
      const stoppedAfter = performance.now() - started;
      console.log(`runaway recursive CTE stopped after ${stoppedAfter.toFixed(0)} ms`);
      expect(error.message).toMatch(/took longer than 2 s.*Narrow it down/);
      expect(stoppedAfter).toBeGreaterThanOrEqual(SQL_LIMITS.timeoutMs - 50);
      expect(stoppedAfter).toBeLessThan(SQL_LIMITS.timeoutMs + 1000);
      const again = performance.now();
      expect((await db.query('SELECT count(*) FROM clusters')).rows).toEqual([[3]]);
      console.log(`first query after the restart answered in ${(performance.now() - again).toFixed(0)} ms (a new worker loading the snapshot)`);
    });

    it('stops a huge cross join at a shorter limit; queries queued behind it still run', async () => {
      const started = performance.now();
      const cross = refusal(
        db,
        'SELECT count(*) FROM metric_daily a, metric_daily b, metric_daily c, metric_daily d, metric_daily e, metric_daily f, metric_daily g, metric_daily h, metric_daily i',
        { timeoutMs: 500 },
      );
      const queued = db.query('SELECT cluster_name FROM clusters ORDER BY cluster_name');
      expect((await cross).message).toMatch(/took longer than 0.5 s/);
      expect(performance.now() - started).toBeLessThan(1500);
      expect((await queued).rows).toEqual([['analytics-dev'], ['billing-prod'], ['orders-prod']]);
      expect((await db.query('SELECT * FROM pragma_query_only')).rows).toEqual([[1]]);
    });
  });
});

describe('defence in depth', () => {
  it('a loaded database refuses writes by itself (query_only), whatever gets past the check', async () => {
    const SQL = await initSqlJs();
    const raw = new SQL.Database();
    try {
      loadSnapshot(raw, packSnapshot(smallFleet()));
      lockDown(raw);
      for (const sql of [
        "INSERT INTO clusters (cluster_id) VALUES ('x')",
        'DELETE FROM metric_daily',
        'DROP TABLE alerts',
        'CREATE TABLE t (x)',
        "UPDATE issues SET assignee = 'me'",
      ]) {
        expect(() => raw.run(sql)).toThrow(/readonly/);
      }
      expect(raw.exec('SELECT count(*) FROM metric_daily')[0]?.values).toEqual([[8]]);
    } finally {
      raw.close();
    }
  });

  it('statementVerb reads past comments, literals and common table expressions', () => {
    expect(statementVerb("-- SELECT\n/* SELECT */ delete FROM x WHERE y = 'SELECT'")).toBe('DELETE');
    expect(statementVerb('WITH RECURSIVE "select"(x) AS MATERIALIZED (SELECT 1), b AS NOT MATERIALIZED (SELECT 2) SELECT * FROM b')).toBe('SELECT');
    expect(statementVerb('WITH a AS (SELECT 1) UPDATE t SET x = 1')).toBe('UPDATE');
    expect(statementVerb('WITH a AS (SELECT 1)')).toBeNull();
    expect(statementVerb('1; SELECT 1')).toBeNull();
    expect(statementVerb('[select] FROM x')).toBeNull();
  });

  it('a closed database refuses queries', async () => {
    const db = await openFleetDatabase({ clusters: [], scores: [], risks: [], rollups: [], alerts: [], issues: [] });
    expect((await db.query('SELECT count(*) FROM clusters')).rows).toEqual([[0]]);
    await db.close();
    await expect(db.query('SELECT 1')).rejects.toThrow(/closed/);
  });
});

// ---------------------------------------------------------------- a fleet of 1,000 clusters

function bigFleet(clusters: number, days: number): FleetSnapshot {
  const snapshot: FleetSnapshot = { clusters: [], scores: [], risks: [], rollups: [], alerts: [], issues: [] };
  const today = Date.UTC(2026, 10, 20);
  for (let i = 0; i < clusters; i++) {
    const id = `${i.toString(16).padStart(8, '0')}-0000-4000-8000-${(i * 7919).toString(16).padStart(12, '0')}`;
    const c = cluster(
      id,
      `cluster-${i}`,
      `Customer ${i % 97}`,
      (['S', 'A', 'B'] as const)[i % 3]!,
      ['us-east-1', 'eu-west-1', 'ap-south-1'][i % 3]!,
      3 + (i % 5),
    );
    snapshot.clusters.push(c);
    snapshot.scores.push(score(c, 40 + (i % 60), i % 60 < 20 ? 'Critical' : i % 60 < 40 ? 'Warning' : 'Healthy'));
    for (let d = days - 1; d >= 0; d--) {
      const day = new Date(today - d * 86_400_000).toISOString().slice(0, 10);
      const metrics: Partial<Record<MetricKey, MetricRollup>> = {};
      METRIC_KEYS.forEach((key, k) => {
        const base = (i % 100) + k;
        metrics[key] = m(base, base + d, (base + d / 2) * 288, 288, base + 1, `${day}T23:5${k % 10}:00.000Z`);
      });
      snapshot.rollups.push({ cluster_id: id, day, metrics } satisfies StoredRollup);
    }
  }
  return snapshot;
}

describe('a fleet of 1,000 clusters × 14 days × 13 metrics', () => {
  let db: FleetDatabase;
  let loadMs = 0;
  beforeAll(async () => {
    const snapshot = bigFleet(1000, 14);
    const started = performance.now();
    db = await openFleetDatabase(snapshot);
    loadMs = performance.now() - started;
  });
  afterAll(async () => {
    await db?.close();
  });

  it('loads well under 2 s', async () => {
    const rows = await db.query('SELECT count(*) FROM metric_daily');
    console.log(`loaded 1,000 clusters, ${rows.rows[0]![0]} metric_daily rows in ${loadMs.toFixed(0)} ms (worker start + load)`);
    expect(rows.rows).toEqual([[1000 * 14 * METRIC_KEYS.length]]);
    expect(loadMs).toBeLessThan(LOAD_BUDGET_MS);
  });

  it('answers typical questions in milliseconds', async () => {
    const queries = {
      'one cluster, one metric, 14 days':
        "SELECT day, max FROM metric_daily WHERE cluster_id = (SELECT cluster_id FROM clusters WHERE cluster_name = 'cluster-500') AND metric_key = 'disk_used_pct' ORDER BY day",
      'fleet-wide peak per metric': 'SELECT metric_key, max(max), avg(avg) FROM metric_daily GROUP BY metric_key',
      'worst 10 tier-S clusters with latest disk':
        "SELECT s.cluster_name, s.tier_adjusted_score, m.last FROM scores s JOIN metric_daily m ON m.cluster_id = s.cluster_id AND m.metric_key = 'disk_used_pct' AND m.day = '2026-11-20' WHERE s.customer_tier = 'S' ORDER BY s.tier_adjusted_score LIMIT 10",
    };
    const timings: string[] = [];
    for (const [what, sql] of Object.entries(queries)) {
      const result = await db.query(sql);
      expect(result.row_count).toBeGreaterThan(0);
      timings.push(`${what}: ${result.duration_ms} ms`);
    }
    console.log(`query times — ${timings.join('; ')}`);
    const one = await db.query(queries['one cluster, one metric, 14 days']);
    expect(one.row_count).toBe(14);
    expect(one.rows[13]).toEqual(['2026-11-20', (500 % 100) + METRIC_KEYS.indexOf('disk_used_pct')]);
  });
});

// ---------------------------------------------------------------- as bundled for Lambda

describe('bundled as for Lambda', () => {
  it(`runs with ${SQL_RUNTIME_FILES.worker} and ${SQL_RUNTIME_FILES.wasm} beside the bundle (no node_modules, no tsx), and loads 1,000 clusters well under 2 s`, async () => {
    const out = mkdtempSync(join(tmpdir(), 'fleet-sql-bundle-'));
    try {
      const source = (file: string) => fileURLToPath(new URL(`../../shared/chat/${file}`, import.meta.url));
      // The project's bundle options (infra/bundling.ts): the chat bundle, plus the worker as a second entry.
      await build({
        entryPoints: [
          { in: source('sql.ts'), out: 'index' },
          { in: source('sql-worker.ts'), out: 'sql-worker' },
        ],
        outdir: out,
        outExtension: { '.js': '.mjs' },
        bundle: true,
        platform: BUNDLE.platform,
        format: BUNDLE.format,
        target: BUNDLE.target,
        minify: BUNDLE.minify,
        mainFields: [...BUNDLE.mainFields],
        banner: { js: BUNDLE.banner },
        logLevel: 'silent',
      });
      copyFileSync(createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm'), join(out, SQL_RUNTIME_FILES.wasm));
      writeFileSync(
        join(out, 'run.mjs'),
        `import { readFileSync } from 'node:fs';
import { openFleetDatabase, SqlRefused } from './index.mjs';
const db = await openFleetDatabase(${JSON.stringify(smallFleet())});
const answer = await db.query("SELECT cluster_name FROM scores WHERE classification = 'Critical'");
const started = performance.now();
const stopped = await db.query(${JSON.stringify(RUNAWAY)}, { timeoutMs: 300 }).then(() => 'ran', (e) => e instanceof SqlRefused ? 'refused' : String(e));
const stoppedMs = performance.now() - started;
const after = await db.query('SELECT count(*) FROM metric_daily');
await db.close();
const big = JSON.parse(readFileSync('big.json', 'utf8'));
const loading = performance.now();
const fleet = await openFleetDatabase(big);
const loadMs = performance.now() - loading;
const bigRows = (await fleet.query('SELECT count(*) FROM metric_daily')).rows;
await fleet.close();
console.log(JSON.stringify({ answer: answer.rows, stopped, stoppedMs, after: after.rows, loadMs, bigRows }));
`,
      );
      writeFileSync(join(out, 'big.json'), JSON.stringify(bigFleet(1000, 14)));
      // A fresh directory outside the repository: nothing to resolve sql.js or tsx from.
      const run = spawnSync(process.execPath, ['run.mjs'], { cwd: out, encoding: 'utf8', timeout: 20_000, env: { ...process.env, NODE_OPTIONS: '' } });
      expect(run.stderr).toBe('');
      const result = JSON.parse(run.stdout) as { answer: unknown; stopped: string; stoppedMs: number; after: unknown; loadMs: number; bigRows: unknown };
      expect(result).toMatchObject({ answer: [['orders-prod']], stopped: 'refused', after: [[8]], bigRows: [[182_000]] });
      expect(result.stoppedMs).toBeLessThan(1300);
      console.log(
        `bundled: 1,000 clusters (182,000 metric_daily rows) loaded in ${result.loadMs.toFixed(0)} ms; runaway stopped after ${result.stoppedMs.toFixed(0)} ms (limit 300)`,
      );
      expect(result.loadMs).toBeLessThan(LOAD_BUDGET_MS);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
