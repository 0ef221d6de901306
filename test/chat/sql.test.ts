// The chat assistant's read-only SQL over a fleet snapshot (shared/chat/sql.ts),
// with hand-made snapshots (sql-fleets.ts; no DynamoDB): answers across tables,
// the statement check and query_only, row/cell/time limits (a runaway query is
// stopped and the database stays usable), SQLite errors, the schema text, a
// 1,000-cluster fleet, and a Lambda-style bundle. How long these take is
// measured by `npm run bench -- chat-sql` (test/bench/chat-sql.ts), not here.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import initSqlJs from 'sql.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRIC_KEYS } from '../../shared/fleet/records.js';
import { emptyColumns, putDay } from '../../shared/fleet/rollup-columns.js';
import { statementVerb } from '../../shared/chat/sql-guard.js';
import { loadSnapshot, lockDown } from '../../shared/chat/sql-load.js';
import { ALERT_TEXT_KEPT, packSnapshot } from '../../shared/chat/sql-snapshot.js';
import { TABLES } from '../../shared/chat/sql-tables.js';
import { openFleetDatabase, SQL_LIMITS, SQL_RUNTIME_FILES, SqlRefused, type FleetDatabase } from '../../shared/chat/sql.js';
import { bundleSql } from './sql-bundle.js';
import { ANALYTICS, bigFleet, ORDERS, RUNAWAY, smallFleet } from './sql-fleets.js';

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

    it('metric_daily: one row per cluster, day and metric; avg = sum / count', async () => {
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

    it(`keeps ${SQL_LIMITS.columnLimit} columns and stops reading rows at ${SQL_LIMITS.resultChars} characters, saying so`, async () => {
      // Within the SQL limit, rows × columns × cells alone would be 100 × 1,990 × 500 characters.
      const sql = `WITH RECURSIVE r(n, x) AS (SELECT 1, hex(zeroblob(250)) UNION ALL SELECT n + 1, x FROM r WHERE n < 101) SELECT ${Array(1990).fill('x').join(',')} FROM r`;
      expect(sql.length).toBeLessThan(SQL_LIMITS.maxSqlChars);
      const wide = await db.query(sql);
      expect(wide.columns).toHaveLength(SQL_LIMITS.columnLimit);
      expect(wide.rows.every((row) => row.length === SQL_LIMITS.columnLimit)).toBe(true);
      expect(wide.row_count).toBeGreaterThan(0);
      expect(wide).toMatchObject({ truncated: true, note: expect.stringMatching(/first 100 of 1990 columns.*64000-character bound/) });
      expect(JSON.stringify(wide.rows).length).toBeLessThanOrEqual(SQL_LIMITS.resultChars);
      // Narrow rows are bounded by their count, with no note.
      const narrow = await db.query('WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 10) SELECT x FROM n');
      expect(narrow).toMatchObject({ row_count: 10, truncated: false });
      expect(narrow.note).toBeUndefined();
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
        "SELECT t.name, c.name, c.type FROM sqlite_temp_schema t, pragma_table_info(t.name) c WHERE t.type IN ('table', 'view') ORDER BY t.name, c.cid",
        { rowLimit: 1000 },
      );
      const storage = TABLES.flatMap((t) => t.storage ?? []);
      const tables = new Set(columns.rows.map((r) => r[0] as string).filter((name) => !storage.includes(name)));
      expect([...tables].sort()).toEqual(TABLES.map((t) => t.name).sort());
      for (const [table, column, type] of columns.rows) {
        if (storage.includes(table as string)) {
          expect(db.schema).toMatch(new RegExp(`a view; .*${table}.* store its rows`));
          continue;
        }
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

  it('retires after the queries already asked of it: they answer, and only a later one finds it closed', async () => {
    // A rebuilt snapshot retires the old one while another loop may be mid-query on it (one process, npm start).
    const old = await openFleetDatabase(smallFleet());
    const counting = 'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 200000) SELECT count(*) FROM n';
    const first = old.query(counting);
    const retired = old.retire();
    const second = old.query('SELECT count(*) FROM clusters'); // asked for while it drains
    expect((await first).rows).toEqual([[200000]]);
    expect((await second).rows).toEqual([[3]]);
    await retired;
    await expect(old.query('SELECT 1')).rejects.toThrow('the fleet database is closed');
  });

  describe('time limit', () => {
    it(`stops a runaway query at the ${SQL_LIMITS.timeoutMs} ms limit, saying so; a replacement worker answers the next query`, async () => {
      const error = await refusal(db, RUNAWAY);
      expect(error.message).toMatch(/took longer than 2 s.*Narrow it down/);
      expect((await db.query('SELECT count(*) FROM clusters')).rows).toEqual([[3]]);
    });

    it('stops a huge cross join at a shorter limit; queries queued behind it still run', async () => {
      const cross = refusal(
        db,
        'SELECT count(*) FROM metric_daily a, metric_daily b, metric_daily c, metric_daily d, metric_daily e, metric_daily f, metric_daily g, metric_daily h, metric_daily i',
        { timeoutMs: 500 },
      );
      const queued = db.query('SELECT cluster_name FROM clusters ORDER BY cluster_name');
      expect((await cross).message).toMatch(/took longer than 0.5 s/);
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
        'DELETE FROM metric_daily_rows',
        'DROP TABLE alerts',
        'CREATE TABLE t (x)',
        "UPDATE issues SET assignee = 'me'",
      ]) {
        expect(() => raw.run(sql)).toThrow(/readonly/);
      }
      expect(() => raw.run('DELETE FROM metric_daily')).toThrow(/cannot modify metric_daily because it is a view/);
      expect(raw.exec('SELECT count(*) FROM metric_daily')[0]?.values).toEqual([[8]]);
    } finally {
      raw.close();
    }
  });

  it("metric_daily's last_at, stored as epoch ms, reads back as the rollup's toISOString() text exactly", async () => {
    const SQL = await initSqlJs();
    const raw = new SQL.Database();
    try {
      const days = ['2026-11-20'];
      const ids = Array.from({ length: 2000 }, (_, i) => `c-${i}`);
      const snapshot = { ...smallFleet(), rollups: emptyColumns(days, ids) };
      const times: number[] = [];
      let seed = 7;
      for (let row = 0; row < ids.length; row++) {
        // Every millisecond of a second at the day's end, then times from 1970 to 2100.
        seed = (seed * 48271) % 2147483647;
        const ms = row < 1000 ? Date.UTC(2026, 10, 20, 23, 59, 59, row) : Math.floor((seed / 2147483647) * Date.UTC(2100, 0, 1));
        times.push(ms);
        putDay(snapshot.rollups, 0, row, { qps: { min: 1, max: 2, sum: 3, count: 2, last: 1, last_at: new Date(ms).toISOString() } });
      }
      loadSnapshot(raw, packSnapshot(snapshot));
      const read = raw.exec("SELECT cluster_id, last_at FROM metric_daily WHERE metric_key = 'qps' ORDER BY cluster_id")[0]!.values;
      const want = ids.map((id, row) => [id, new Date(times[row]!).toISOString()]).sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
      expect(read).toEqual(want);
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

  it('keeps an alert’s texts to ALERT_TEXT_KEPT characters each (an alert may carry 64 KB), a cut marked', async () => {
    const fleet = smallFleet();
    const long = fleet.alerts[0]!;
    fleet.alerts[0] = {
      ...long,
      detail: 'd'.repeat(5_000),
      labels: { ...long.labels, runbook: 'r'.repeat(3_000) },
      annotations: { ...long.annotations, description: 'x'.repeat(20_000) },
    };
    const db = await openFleetDatabase(fleet);
    try {
      const { rows } = await db.query(
        `SELECT length(detail), substr(detail, -1), length(json_extract(labels, '$.runbook')), length(json_extract(annotations, '$.description')), json_extract(labels, '$.service') FROM alerts WHERE alert_id = '${long.alert_id}'`,
      );
      expect(rows).toEqual([[ALERT_TEXT_KEPT, '…', ALERT_TEXT_KEPT, ALERT_TEXT_KEPT, 'storage']]);
    } finally {
      await db.close();
    }
  });

  it('answers its schema before the load ends; a load that fails rejects `loaded` and every query waiting for it', async () => {
    // The rollups name one cluster twice: the main thread counts nothing wrong, SQLite refuses the second
    // row of metric_daily_clusters (its cluster_id is UNIQUE).
    const db = await openFleetDatabase({
      clusters: [],
      scores: [],
      risks: [],
      rollups: emptyColumns(['2026-11-20'], [ORDERS, ORDERS]),
      alerts: [],
      issues: [],
    });
    try {
      expect(db.schema).toContain('TABLE clusters (0 rows)');
      await expect(db.loaded).rejects.toThrow(/^loading the fleet snapshot failed: .*UNIQUE/);
      for (let attempt = 0; attempt < 2; attempt++) {
        await expect(db.query('SELECT count(*) FROM clusters')).rejects.toThrow(/^loading the fleet snapshot failed: .*UNIQUE/);
      }
    } finally {
      await db.close();
    }
  });

  it('closed while it loads: the load stops, and the query waiting for it says the database is closed', async () => {
    const db = await openFleetDatabase(bigFleet(200, 14));
    const waiting = db.query('SELECT count(*) FROM metric_daily');
    await db.close();
    await expect(waiting).rejects.toThrow(/closed/);
    await expect(db.loaded).rejects.toThrow(/closed/);
  });

  it('a closed database refuses queries', async () => {
    const db = await openFleetDatabase({ clusters: [], scores: [], risks: [], rollups: emptyColumns([], []), alerts: [], issues: [] });
    expect((await db.query('SELECT count(*) FROM clusters')).rows).toEqual([[0]]);
    await db.close();
    await expect(db.query('SELECT 1')).rejects.toThrow(/closed/);
  });
});

describe('a fleet of 1,000 clusters × 14 days × 13 metrics', () => {
  let db: FleetDatabase;
  beforeAll(async () => {
    db = await openFleetDatabase(bigFleet(1000, 14));
  });
  afterAll(async () => {
    await db?.close();
  });

  it('loads every row', async () => {
    expect((await db.query('SELECT count(*) FROM metric_daily')).rows).toEqual([[1000 * 14 * METRIC_KEYS.length]]);
    expect((await db.query('SELECT count(*) FROM clusters')).rows).toEqual([[1000]]);
  });

  it('answers typical questions', async () => {
    const queries = {
      'one cluster, one metric, 14 days':
        "SELECT day, max FROM metric_daily WHERE cluster_id = (SELECT cluster_id FROM clusters WHERE cluster_name = 'cluster-500') AND metric_key = 'disk_used_pct' ORDER BY day",
      'fleet-wide peak per metric': 'SELECT metric_key, max(max), avg(avg) FROM metric_daily GROUP BY metric_key',
      'worst 10 tier-S clusters with latest disk':
        "SELECT s.cluster_name, s.tier_adjusted_score, m.last FROM scores s JOIN metric_daily m ON m.cluster_id = s.cluster_id AND m.metric_key = 'disk_used_pct' AND m.day = '2026-11-20' WHERE s.customer_tier = 'S' ORDER BY s.tier_adjusted_score LIMIT 10",
    };
    for (const sql of Object.values(queries)) expect((await db.query(sql)).row_count).toBeGreaterThan(0);
    const one = await db.query(queries['one cluster, one metric, 14 days']);
    expect(one.row_count).toBe(14);
    expect(one.rows[13]).toEqual(['2026-11-20', (500 % 100) + METRIC_KEYS.indexOf('disk_used_pct')]);
  });
});

// ---------------------------------------------------------------- as bundled for Lambda

describe('bundled as for Lambda', () => {
  it(`runs with ${SQL_RUNTIME_FILES.worker} and ${SQL_RUNTIME_FILES.wasm} beside the bundle (no node_modules, no tsx), and loads 1,000 clusters`, async () => {
    const out = mkdtempSync(join(tmpdir(), 'fleet-sql-bundle-'));
    try {
      await bundleSql(out);
      writeFileSync(
        join(out, 'run.mjs'),
        `import { readFileSync } from 'node:fs';
import { openFleetDatabase, SqlRefused } from './index.mjs';
const db = await openFleetDatabase(${JSON.stringify(smallFleet())});
const answer = await db.query("SELECT cluster_name FROM scores WHERE classification = 'Critical'");
const stopped = await db.query(${JSON.stringify(RUNAWAY)}, { timeoutMs: 300 }).then(() => 'ran', (e) => e instanceof SqlRefused ? 'refused' : String(e));
const after = await db.query('SELECT count(*) FROM metric_daily');
await db.close();
const fleet = await openFleetDatabase(JSON.parse(readFileSync('big.json', 'utf8')));
const bigRows = (await fleet.query('SELECT count(*) FROM metric_daily')).rows;
await fleet.close();
console.log(JSON.stringify({ answer: answer.rows, stopped, after: after.rows, bigRows }));
`,
      );
      writeFileSync(join(out, 'big.json'), JSON.stringify(bigFleet(1000, 14)));
      // A fresh directory outside the repository: nothing to resolve sql.js or tsx from.
      const run = spawnSync(process.execPath, ['run.mjs'], { cwd: out, encoding: 'utf8', timeout: 20_000, env: { ...process.env, NODE_OPTIONS: '' } });
      expect(run.stderr).toBe('');
      expect(JSON.parse(run.stdout)).toEqual({ answer: [['orders-prod']], stopped: 'refused', after: [[8]], bigRows: [[182_000]] });
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
