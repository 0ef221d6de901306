// The tables of the chat assistant's SQL snapshot: one definition per table
// gives its DDL, its rows from a snapshot and the text that describes it to
// the model, so the three never disagree. schemaText renders that description
// (with what a loaded snapshot holds) for the run_sql tool.
// Types only from sql.js: the worker (sql-worker.ts) owns the SQLite engine;
// the main thread uses this module for the schema text.
import type { Database, Statement } from 'sql.js';
import { cellOf, COUNT, LAST, MAX, METRICS, MIN, PRESENT, SLOTS, SUM } from '../fleet/rollup-columns.js';
import { METRIC_KEYS } from '../fleet/records.js';
import { ALERT_TEXT_KEPT, type SnapshotInput, type SnapshotRollups } from './sql-snapshot.js';
import { json, num, quote, type SqlValue, text } from './sql-values.js';

type ColumnType = 'TEXT' | 'INTEGER' | 'REAL';

export interface ColumnDef {
  name: string;
  type: ColumnType;
  /** One line for the model. */
  doc: string;
}

export interface TableDef {
  name: string;
  doc: string;
  columns: readonly ColumnDef[];
  /** Unique key; a later row with the same key replaces an earlier one. */
  primaryKey?: readonly string[];
  /** Instead of a table of `columns`: the statements that create it (metric_daily: a view over compact tables). */
  ddl?: readonly string[];
  /** The tables `ddl` creates to hold the rows, named in the schema text so that nothing the database has is unexplained. */
  storage?: readonly string[];
  /** Secondary indexes (created after the bulk load). */
  indexes: readonly (readonly string[])[];
  /** The rows of the snapshot, each in column order (inserted one by one through insertSql). */
  rows?(snapshot: SnapshotInput): Iterable<SqlValue[]>;
  /** Instead of `rows`: inserts the snapshot's rows itself (inside the load's transaction). */
  load?(db: Database, snapshot: SnapshotInput): void;
}

const col = (name: string, type: ColumnType, doc: string): ColumnDef => ({ name, type, doc });

const TIME = "ISO-8601 UTC text such as '2026-01-31T14:05:00.000Z'";

/**
 * metric_daily is a view: its rows (1.8 million for 10,000 clusters over 14 days) are stored with the
 * cluster, metric and day as small integers into three key tables, and `last_at` as epoch ms. A row
 * takes ≈ 64 bytes of SQLite's memory where the text columns took ≈ 160 (281 → 111 MB at 10,000
 * clusters), loads faster, and a fleet-wide GROUP BY metric_key runs in a third of the time. The view's
 * LEFT JOINs on integer primary keys are left out of a query that reads none of their columns (SQLite
 * omits such a join); `last_at` is formatted only when read, and strftime of the ms gives exactly the
 * toISOString() text rollup times always are (shared/fleet/rollup-columns.ts; test/chat/sql.test.ts).
 * The CASTs give the view's computed columns their types.
 */
const METRIC_DAILY_DDL = [
  'CREATE TEMP TABLE metric_daily_metrics (k INTEGER PRIMARY KEY, metric_key TEXT NOT NULL UNIQUE)',
  'CREATE TEMP TABLE metric_daily_clusters (c INTEGER PRIMARY KEY, cluster_id TEXT NOT NULL UNIQUE)',
  'CREATE TEMP TABLE metric_daily_days (d INTEGER PRIMARY KEY, day TEXT NOT NULL UNIQUE)',
  'CREATE TEMP TABLE metric_daily_rows (k INTEGER, c INTEGER, d INTEGER, min REAL, max REAL, sum REAL, count INTEGER, last REAL, last_ms INTEGER, PRIMARY KEY (k, c, d)) WITHOUT ROWID',
  `CREATE TEMP VIEW metric_daily AS SELECT c.cluster_id AS cluster_id, d.day AS day, k.metric_key AS metric_key, r.min AS min, r.max AS max,
    CAST(MIN(r.max, MAX(r.min, r.sum / r.count)) AS REAL) AS avg, r.sum AS sum, r.count AS count, r.last AS last,
    CAST(strftime('%Y-%m-%dT%H:%M:%fZ', r.last_ms / 1000.0, 'unixepoch') AS TEXT) AS last_at
    FROM metric_daily_metrics k JOIN metric_daily_rows r ON r.k = k.k
    LEFT JOIN metric_daily_clusters c ON c.c = r.c LEFT JOIN metric_daily_days d ON d.d = r.d`,
];

export const TABLES: readonly TableDef[] = [
  {
    name: 'clusters',
    doc: 'Cluster inventory: one row per managed database cluster.',
    primaryKey: ['cluster_id'],
    indexes: [['customer_name'], ['region']],
    columns: [
      col('cluster_id', 'TEXT', 'cluster UUID; every other table joins on it'),
      col('cluster_name', 'TEXT', 'display name of the cluster'),
      col('customer_name', 'TEXT', 'customer that owns the cluster'),
      col('account_id', 'TEXT', "customer's cloud account id"),
      col('account_name', 'TEXT', "customer's cloud account name"),
      col('email', 'TEXT', "customer's contact email"),
      col('customer_tier', 'TEXT', "support tier: 'S' (most important), 'A' or 'B'"),
      col('cluster_type', 'TEXT', 'deployment type of the cluster'),
      col('region', 'TEXT', "cloud region, e.g. 'us-east-1'"),
      col('engine_version', 'TEXT', "database engine version, e.g. '3.2.1' (compare as text)"),
      col('resource_state', 'TEXT', "lifecycle state, e.g. 'running'"),
      col('node_count', 'INTEGER', 'number of nodes in the inventory'),
      col('created_at', 'TEXT', `when the cluster first appeared in the inventory (${TIME})`),
      col('updated_at', 'TEXT', 'last inventory update (ISO-8601 UTC)'),
    ],
    *rows(s) {
      for (const c of s.clusters) {
        yield [
          text(c.cluster_id),
          text(c.cluster_name),
          text(c.customer_name),
          text(c.account_id),
          text(c.account_name),
          text(c.email),
          text(c.customer_tier),
          text(c.cluster_type),
          text(c.region),
          text(c.engine_version),
          text(c.resource_state),
          num(c.node_count),
          text(c.created_at),
          text(c.updated_at),
        ];
      }
    },
  },
  {
    name: 'scores',
    doc: 'Health score of each cluster (one row per cluster) over the scoring lookback (7 days by default). Scores are 0-100, higher is healthier.',
    primaryKey: ['cluster_id'],
    indexes: [['classification'], ['tier_adjusted_score']],
    columns: [
      col('cluster_id', 'TEXT', 'cluster UUID (clusters.cluster_id)'),
      col('cluster_name', 'TEXT', 'copy of clusters.cluster_name'),
      col('customer_name', 'TEXT', 'copy of clusters.customer_name'),
      col('customer_tier', 'TEXT', "copy of clusters.customer_tier ('S', 'A', 'B')"),
      col('overall_score', 'REAL', 'weighted blend of metrics_score and alerts_score'),
      col('metrics_score', 'REAL', 'weighted score of the metric dimensions (see score_dimensions)'),
      col('alerts_score', 'REAL', 'score from the number of alerts fired in the lookback'),
      col('tier_adjusted_score', 'REAL', 'overall_score with the customer tier weighing in; classification and "worst clusters" rankings use this'),
      col('classification', 'TEXT', "'Healthy', 'Warning' or 'Critical' (from tier_adjusted_score)"),
      col('top_risk', 'TEXT', "lowest-scoring dimension with its score, e.g. 'Disk Usage (32)' ('None' only without dimensions)"),
      col('firing_alert_count_7d', 'INTEGER', 'alerts fired in the last 7 days'),
      col('compaction_score', 'REAL', 'compaction score over the lookback (NULL: no data)'),
      col('disk_used_pct', 'REAL', 'disk used, percent (NULL: no data)'),
      col('query_errors_7d', 'INTEGER', 'failed queries in the last 7 days (NULL: no data)'),
      col('query_error_pct', 'REAL', 'failed queries, percent of all queries (NULL: no data)'),
      col('qps', 'REAL', 'queries per second (NULL: no data)'),
      col('node_count', 'INTEGER', 'nodes per the metrics, else per the inventory'),
      col('risk_reasons', 'TEXT', 'JSON array of texts: why the score is not 100, worst first'),
      col('suggested_actions', 'TEXT', 'JSON array of texts: what to do about it'),
    ],
    *rows(s) {
      for (const c of s.scores) {
        const m = c.metrics ?? ({} as Partial<typeof c.metrics>);
        yield [
          text(c.cluster_id),
          text(c.cluster_name),
          text(c.customer_name),
          text(c.customer_tier),
          num(c.overall_score),
          num(c.metrics_score),
          num(c.alerts_score),
          num(c.tier_adjusted_score),
          text(c.classification),
          text(c.top_risk),
          num(c.firing_alert_count_7d),
          num(m.compaction_score),
          num(m.disk_used_pct),
          num(m.query_errors_7d),
          num(m.query_error_pct),
          num(m.qps),
          num(m.node_count),
          json(c.risk_reasons ?? []),
          json(c.suggested_actions ?? []),
        ];
      }
    },
  },
  {
    name: 'score_dimensions',
    doc: 'The metric dimensions behind scores.metrics_score: one row per cluster and scored dimension (dimensions without data are absent).',
    primaryKey: ['cluster_id', 'metric_key'],
    indexes: [['metric_key', 'status']],
    columns: [
      col('cluster_id', 'TEXT', 'cluster UUID'),
      col('dimension', 'TEXT', "dimension name, e.g. 'Disk Usage'"),
      col('metric_key', 'TEXT', 'metric the dimension scores (as in metric_daily.metric_key)'),
      col('score', 'REAL', '0-100, higher is healthier'),
      col('value', 'REAL', 'the metric aggregated over the lookback'),
      col('weight', 'REAL', 'weight of the dimension in metrics_score'),
      col('status', 'TEXT', "'healthy', 'watch', 'warning' or 'critical'"),
    ],
    *rows(s) {
      for (const c of s.scores) {
        for (const d of c.dimension_scores ?? [])
          yield [text(c.cluster_id), text(d.name), text(d.metric_key), num(d.score), num(d.value), num(d.weight), text(d.status)];
      }
    },
  },
  {
    name: 'risks',
    doc: 'Risk assessment of each cluster from the risk rules (one row per cluster): its worst metric decides the level.',
    primaryKey: ['cluster_id'],
    indexes: [['risk_level']],
    columns: [
      col('cluster_id', 'TEXT', 'cluster UUID'),
      col('cluster_name', 'TEXT', 'copy of clusters.cluster_name'),
      col('customer_name', 'TEXT', 'copy of clusters.customer_name'),
      col('risk_level', 'TEXT', "'Critical', 'Warning' or 'Healthy'"),
      col('overall_score', 'REAL', 'copy of scores.overall_score'),
      col('signal_count', 'INTEGER', 'number of risk signals (metrics past a threshold)'),
      col('risk_signals', 'TEXT', "JSON array of texts, worst first, e.g. 'disk_used_pct max 93.5 >= critical 90'"),
      col('suggested_actions', 'TEXT', 'JSON array of texts'),
    ],
    *rows(s) {
      for (const r of s.risks) {
        yield [
          text(r.cluster_id),
          text(r.cluster_name),
          text(r.customer_name),
          text(r.risk_level),
          num(r.overall_score),
          (r.risk_signals ?? []).length,
          json(r.risk_signals ?? []),
          json(r.suggested_actions ?? []),
        ];
      }
    },
  },
  {
    name: 'risk_metrics',
    doc: 'The metrics behind risks: one row per cluster and risk-rule metric with data.',
    primaryKey: ['cluster_id', 'metric_key'],
    indexes: [['metric_key', 'status']],
    columns: [
      col('cluster_id', 'TEXT', 'cluster UUID'),
      col('metric_key', 'TEXT', 'metric (as in metric_daily.metric_key)'),
      col('value', 'REAL', 'the metric aggregated over the risk lookback as the rule says (e.g. max, avg, last)'),
      col('status', 'TEXT', "'critical', 'warning' or 'healthy' against the rule's thresholds"),
    ],
    *rows(s) {
      for (const r of s.risks) {
        for (const [key, m] of Object.entries(r.metrics ?? {})) yield [text(r.cluster_id), key, num(m?.value), text(m?.status)];
      }
    },
  },
  {
    name: 'metric_daily',
    doc: 'Daily metric rollups: one row per cluster, UTC day and metric.',
    primaryKey: ['metric_key', 'cluster_id', 'day'],
    // The key serves one metric fleet-wide in key order (GROUP BY metric_key without a sort) and,
    // through it, one cluster's metrics; other indexes cost more to build than the scans they save.
    indexes: [],
    ddl: METRIC_DAILY_DDL,
    storage: ['metric_daily_rows', 'metric_daily_metrics', 'metric_daily_clusters', 'metric_daily_days'],
    columns: [
      col('cluster_id', 'TEXT', 'cluster UUID'),
      col('day', 'TEXT', "UTC day 'YYYY-MM-DD'"),
      col('metric_key', 'TEXT', 'which metric (the keys present are listed below)'),
      col('min', 'REAL', 'smallest sample of the day'),
      col('max', 'REAL', 'largest sample of the day'),
      col('avg', 'REAL', 'mean of the day (sum / count, held within min and max)'),
      col('sum', 'REAL', 'sum of the samples'),
      col('count', 'INTEGER', 'number of samples'),
      col('last', 'REAL', 'value of the latest sample of the day'),
      col('last_at', 'TEXT', 'time of that latest sample (ISO-8601 UTC)'),
    ],
    load: loadMetricDaily,
  },
  {
    name: 'alerts',
    doc: 'Alertmanager alerts that started in the last 30 days, and older ones still firing: one row per alert occurrence.',
    primaryKey: ['alert_id'],
    indexes: [['cluster_id', 'starts_at'], ['starts_at'], ['alert_name']],
    columns: [
      col('alert_id', 'TEXT', 'alert occurrence id'),
      col('cluster_id', 'TEXT', 'cluster UUID'),
      col('alert_name', 'TEXT', "alert rule name, e.g. 'DiskUsageHigh'"),
      col('severity', 'TEXT', "severity label, e.g. 'critical', 'warning'"),
      col('status', 'TEXT', "'Firing' or 'Resolved'"),
      col('starts_at', 'TEXT', `when it started (${TIME})`),
      col('ends_at', 'TEXT', 'when it resolved (ISO-8601 UTC); NULL while firing'),
      col('fingerprint', 'TEXT', "Alertmanager's fingerprint (same alert rule and labels, same fingerprint)"),
      col('summary', 'TEXT', `summary annotation (at most ${ALERT_TEXT_KEPT} characters; a longer one is cut, ending in …)`),
      col('detail', 'TEXT', `description annotation (at most ${ALERT_TEXT_KEPT} characters, likewise)`),
      col('labels', 'TEXT', `JSON object of the alert's labels: json_extract(labels, '$.service') (values cut at ${ALERT_TEXT_KEPT} characters)`),
      col('annotations', 'TEXT', `JSON object of the annotations (values cut at ${ALERT_TEXT_KEPT} characters)`),
      col('dashboard_url', 'TEXT', 'link to a dashboard for the alert'),
      col('received_at', 'TEXT', 'when the service first received it (ISO-8601 UTC)'),
      col('updated_at', 'TEXT', 'last change of status or text (ISO-8601 UTC; a repeat that changes nothing leaves it)'),
    ],
    *rows(s) {
      for (const a of s.alerts) {
        yield [
          text(a.alert_id),
          text(a.cluster_id),
          text(a.alert_name),
          text(a.severity),
          text(a.status),
          text(a.starts_at),
          text(a.ends_at),
          text(a.fingerprint),
          text(a.summary),
          text(a.detail),
          json(a.labels ?? {}),
          json(a.annotations ?? {}),
          text(a.dashboard_url),
          text(a.received_at),
          text(a.updated_at),
        ];
      }
    },
  },
  {
    name: 'issues',
    doc: 'Issues: alerts of a cluster grouped by the issue rules, with their triage.',
    primaryKey: ['issue_id'],
    indexes: [['cluster_id', 'first_seen'], ['last_seen'], ['status', 'severity']],
    columns: [
      col('issue_id', 'TEXT', "issue id, e.g. 'iss-…'"),
      col('issue_name', 'TEXT', 'name from the alert names it groups'),
      col('severity', 'TEXT', "'Critical' or 'Warning'"),
      col('status', 'TEXT', "'Ongoing' or 'Resolved'"),
      col('cluster_id', 'TEXT', 'cluster UUID'),
      col('cluster_name', 'TEXT', 'copy of clusters.cluster_name'),
      col('customer_name', 'TEXT', 'copy of clusters.customer_name'),
      col('group_key', 'TEXT', "what grouped the alerts, e.g. 'cluster=<id>|alert_name=DiskUsageHigh'"),
      col('alert_count', 'INTEGER', 'alerts in the issue'),
      col('alert_names', 'TEXT', 'JSON array of the distinct alert names (the first 50)'),
      col('first_seen', 'TEXT', 'start of its first alert (ISO-8601 UTC)'),
      col('last_seen', 'TEXT', 'start of its latest alert (ISO-8601 UTC)'),
      col('resolved_at', 'TEXT', 'when it resolved (ISO-8601 UTC); NULL while Ongoing'),
      col('triage_status', 'TEXT', "triage state set by an engineer ('' = not triaged)"),
      col('disposition_status', 'TEXT', "disposition set by an engineer ('' = none)"),
      col('assignee', 'TEXT', "who is on it ('' = nobody)"),
      col('notes', 'TEXT', 'triage notes'),
      col('ticket_key', 'TEXT', "ticket in the tracker, e.g. 'OPS-123' ('' = none)"),
      col('ticket_url', 'TEXT', "link to the ticket ('' = none)"),
      col('triage_updated_at', 'TEXT', "last triage change (ISO-8601 UTC; '' = never)"),
      col('triage_updated_by', 'TEXT', 'who made it'),
    ],
    *rows(s) {
      for (const i of s.issues) {
        yield [
          text(i.issue_id),
          text(i.issue_name),
          text(i.severity),
          text(i.status),
          text(i.cluster_id),
          text(i.cluster_name),
          text(i.customer_name),
          text(i.group_key),
          num(i.alert_count),
          json(i.alert_names ?? []),
          text(i.first_seen),
          text(i.last_seen),
          text(i.resolved_at),
          text(i.triage_status ?? ''),
          text(i.disposition_status ?? ''),
          text(i.assignee ?? ''),
          text(i.notes ?? ''),
          text(i.ticket_key ?? ''),
          text(i.ticket_url ?? ''),
          text(i.updated_at ?? ''),
          text(i.updated_by ?? ''),
        ];
      }
    },
  },
];

/** Rows per INSERT statement: 6 parameters each, far below SQLite's limit of 32,766. */
const ROWS_PER_INSERT = 100;

/** Prepared INSERTs kept for metric_daily's load (one per metric and set of days: usually one per metric). */
const MAX_CACHED_INSERTS = 256;

/**
 * Loads metric_daily's tables from the rollup columns, rows in key order (metric, cluster, day), so
 * each is appended after the previous one. With sql.js binding a value costs more than SQLite storing
 * it, so one INSERT per group (a cluster's one metric) writes all its days: the cluster is bound once
 * (?1), the metric and the days are literals of the statement (one prepared statement per metric and
 * set of days, usually one per metric).
 */
function loadMetricDaily(db: Database, snapshot: SnapshotInput): void {
  const r = snapshot.rollups;
  const clusters = r.clusterIds.length;
  insertAll(db, 'metric_daily_clusters', r.clusterIds.entries());
  insertAll(db, 'metric_daily_days', r.days.entries());
  // Every metric the columns can hold: one without rows has none in the view either.
  insertAll(db, 'metric_daily_metrics', METRIC_KEYS.entries());
  const inserts = new Map<string, Statement>();
  let oneRow: Statement | undefined;
  const prepare = (m: number, days: number[]) =>
    db.prepare(
      `INSERT INTO metric_daily_rows VALUES ${days
        .map((d, i) => {
          const n = 2 + i * 6; // min, max, sum, count, last, last_ms
          return `(${m}, ?1, ${d}, ?${n}, ?${n + 1}, ?${n + 2}, ?${n + 3}, ?${n + 4}, ?${n + 5})`;
        })
        .join(', ')}`,
    );
  try {
    for (let m = 0; m < METRICS; m++) {
      for (let c = 0; c < clusters; c++) {
        const days: number[] = [];
        for (let d = 0; d < r.days.length; d++) if (r.values[slotOf(r, d, c, m) + PRESENT] === 1) days.push(d);
        for (let from = 0; from < days.length; from += ROWS_PER_INSERT) {
          const some = days.slice(from, from + ROWS_PER_INSERT);
          const signature = `${m}:${some.join(',')}`;
          let insert = inserts.get(signature);
          if (!insert && inserts.size < MAX_CACHED_INSERTS) inserts.set(signature, (insert = prepare(m, some)));
          if (insert) {
            const values: number[] = [c];
            for (const d of some) pushRow(values, r, d, c, m);
            insert.run(values);
            continue;
          }
          // An unusual set of days once the cache is full: row by row.
          oneRow ??= db.prepare('INSERT INTO metric_daily_rows VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
          for (const d of some) {
            const values = [m, c, d];
            pushRow(values, r, d, c, m);
            oneRow.run(values);
          }
        }
      }
    }
  } finally {
    for (const insert of inserts.values()) insert.free();
    oneRow?.free();
  }
}

/** A key table's rows: (its integer, its text). */
function insertAll(db: Database, table: string, rows: Iterable<readonly [number, string]>): void {
  const insert = db.prepare(`INSERT INTO ${table} VALUES (?, ?)`);
  try {
    for (const row of rows) insert.run([...row]);
  } finally {
    insert.free();
  }
}

/** Where a cluster's (row `c`) metric `m` on day `d` starts in the columns' values (RollupColumns' layout). */
const slotOf = (r: SnapshotRollups, d: number, c: number, m: number): number => (cellOf(r, d, c) * METRICS + m) * SLOTS;

/** min, max, sum, count, last and last_ms of one present rollup. */
function pushRow(values: number[], r: SnapshotRollups, d: number, c: number, m: number): void {
  const at = slotOf(r, d, c, m);
  values.push(r.values[at + MIN]!, r.values[at + MAX]!, r.values[at + SUM]!, r.values[at + COUNT]!, r.values[at + LAST]!);
  values.push(r.lastAt[cellOf(r, d, c) * METRICS + m]!);
}

/**
 * What a snapshot puts in each table, counted from the snapshot rather than asked of SQLite, so the
 * schema text (which the model's first call carries) is ready before the worker's load ends. A row
 * whose key repeats an earlier one's replaces it (insertSql): the lists come from DynamoDB keyed as
 * the tables are, so the counts are the tables'.
 */
export function snapshotStats(snapshot: SnapshotInput): SnapshotStats {
  const rollups = metricDailyStats(snapshot.rollups);
  const rowCounts: Record<string, number> = {};
  for (const table of TABLES) {
    if (table.name === 'metric_daily') rowCounts[table.name] = rollups.rows;
    else if (table.rows) {
      let rows = 0;
      for (const _ of table.rows(snapshot)) rows++;
      rowCounts[table.name] = rows;
    }
  }
  return { rowCounts, metricKeys: rollups.metricKeys, firstDay: rollups.firstDay, lastDay: rollups.lastDay };
}

/** What of the rollups metric_daily holds: its rows, the metric keys (sorted) and the first and last day with any. */
function metricDailyStats(r: SnapshotRollups): { rows: number; metricKeys: string[]; firstDay: string | null; lastDay: string | null } {
  let rows = 0;
  let firstDay: string | null = null;
  let lastDay: string | null = null;
  const keys = new Set<string>();
  for (let d = 0; d < r.days.length; d++) {
    for (let c = 0; c < r.clusterIds.length; c++) {
      for (let m = 0; m < METRICS; m++) {
        if (r.values[slotOf(r, d, c, m) + PRESENT] !== 1) continue;
        rows++;
        keys.add(METRIC_KEYS[m]!);
        firstDay ??= r.days[d]!;
        lastDay = r.days[d]!;
      }
    }
  }
  return { rows, metricKeys: [...keys].sort(), firstDay, lastDay };
}

/** The statements that create a table, in the temp schema (see loadSnapshot); no secondary indexes (those come after the load). */
export function createTableSql(table: TableDef): readonly string[] {
  if (table.ddl) return table.ddl;
  const columns = table.columns.map((c) => `${quote(c.name)} ${c.type}`);
  if (table.primaryKey) columns.push(`PRIMARY KEY (${table.primaryKey.map(quote).join(', ')})`);
  return [`CREATE TEMP TABLE ${quote(table.name)} (${columns.join(', ')})`];
}

export function createIndexSql(table: TableDef): string[] {
  return table.indexes.map((cols) => `CREATE INDEX ${quote(`${table.name}_by_${cols.join('_')}`)} ON ${quote(table.name)} (${cols.map(quote).join(', ')})`);
}

/** Later rows with the same key replace earlier ones, so a snapshot with duplicates still loads. */
export function insertSql(table: TableDef): string {
  return `INSERT OR REPLACE INTO ${quote(table.name)} VALUES (${table.columns.map(() => '?').join(', ')})`;
}

/** What a snapshot puts in the database, for the schema text. */
export interface SnapshotStats {
  rowCounts: Record<string, number>;
  metricKeys: string[];
  firstDay: string | null;
  lastDay: string | null;
}

const EXAMPLES = [
  {
    question: 'Critical clusters of tier-S customers, worst first',
    sql: "SELECT s.cluster_name, s.customer_name, s.tier_adjusted_score, s.top_risk, c.region\nFROM scores s JOIN clusters c ON c.cluster_id = s.cluster_id\nWHERE s.classification = 'Critical' AND s.customer_tier = 'S'\nORDER BY s.tier_adjusted_score LIMIT 20",
  },
  {
    question: 'Daily peak disk usage of one cluster over the last 7 days',
    sql: "SELECT day, max AS peak_disk_pct, avg\nFROM metric_daily\nWHERE cluster_id = (SELECT cluster_id FROM clusters WHERE cluster_name = 'orders-prod')\n  AND metric_key = 'disk_used_pct' AND day >= date('now', '-6 days')\nORDER BY day",
  },
  {
    question: 'Alerts that fired most in the last 7 days, with how many clusters they hit and open untriaged issues',
    sql: "WITH recent AS (SELECT * FROM alerts WHERE starts_at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-7 days'))\nSELECT r.alert_name, count(*) AS fired, count(DISTINCT r.cluster_id) AS clusters,\n  (SELECT count(*) FROM issues i, json_each(i.alert_names) n\n   WHERE n.value = r.alert_name AND i.status = 'Ongoing' AND i.triage_status = '') AS untriaged_open_issues\nFROM recent r GROUP BY r.alert_name ORDER BY fired DESC LIMIT 10",
  },
];

/** The schema as text for the model: tables, columns with types and meanings, what the snapshot holds, examples. */
export function schemaText(
  stats: SnapshotStats,
  limits: { rowLimit: number; timeoutMs: number; cellChars: number; maxSqlChars: number; columnLimit: number; resultChars: number },
): string {
  const lines = [
    'SQLite database (a read-only snapshot of the fleet). Send one SELECT statement (WITH … SELECT is fine);',
    `at most ${limits.rowLimit} rows and ${limits.columnLimit} columns come back, text cells are cut at ${limits.cellChars} characters and a result at ${limits.resultChars}, a query may run ${limits.timeoutMs / 1000} s and be ${limits.maxSqlChars} characters long.`,
    "Times are ISO-8601 UTC text ('2026-01-31T14:05:00.000Z') and compare as text; days are 'YYYY-MM-DD'. SQLite date functions work (date('now', '-7 days')).",
    "JSON columns hold arrays or objects as text: expand with json_each(col), read with json_extract(col, '$.key'), or search with LIKE.",
    'Aggregate functions and columns can share a name (metric_daily.max): max(max) is the largest daily maximum.',
    '',
  ];
  for (const table of TABLES) {
    const count = stats.rowCounts[table.name];
    lines.push(`TABLE ${table.name}${count === undefined ? '' : ` (${count} rows)`}: ${table.doc}`);
    if (table.primaryKey) lines.push(`  key: (${table.primaryKey.join(', ')})`);
    if (table.storage) lines.push(`  a view; ${table.storage.join(', ')} store its rows with integer keys: query ${table.name}`);
    for (const c of table.columns) lines.push(`  ${c.name} ${c.type}: ${c.doc}`);
    if (table.name === 'metric_daily') {
      lines.push(`  metric keys present: ${stats.metricKeys.length ? stats.metricKeys.join(', ') : '(none)'}`);
      if (stats.firstDay) lines.push(`  days present: ${stats.firstDay} to ${stats.lastDay}`);
    }
    lines.push('');
  }
  lines.push('EXAMPLES');
  for (const e of EXAMPLES) lines.push(`-- ${e.question}`, `${e.sql};`, '');
  return lines.join('\n').trimEnd();
}
