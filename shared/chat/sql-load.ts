// Loading a packed snapshot (sql-snapshot.ts) into a sql.js Database, in the
// worker thread (sql-worker.ts): the tables of sql-tables.ts and their rows,
// then locking it read-only for the queries.
import type { Database } from 'sql.js';
import type { SnapshotInput } from './sql-snapshot.js';
import { createIndexSql, createTableSql, insertSql, TABLES } from './sql-tables.js';

/**
 * What SQLite may allocate beyond the loaded tables (bytes): a query that would
 * build a huge string, sort or temporary table fails with "out of memory"
 * instead of growing the worker without bound.
 */
export const QUERY_HEAP_LIMIT = 128 * 1024 * 1024;

/**
 * Loads a snapshot into a fresh connection: the tables, then every row inside
 * one transaction (prepared statements), then the indexes (faster built once
 * than maintained row by row).
 *
 * The tables live in the connection's temp schema, held in memory by SQLite
 * itself: a table in sql.js's main database is a file in Emscripten's
 * in-memory file system, which grows by 1/8 at a time (copying the file each
 * time) and made the load a third slower. Unqualified names find temp tables
 * first, so queries do not notice.
 */
export function loadSnapshot(db: Database, snapshot: SnapshotInput): void {
  db.run('PRAGMA temp_store = MEMORY');
  for (const table of TABLES) for (const sql of createTableSql(table)) db.run(sql);
  db.run('BEGIN');
  for (const table of TABLES) {
    if (table.load) {
      table.load(db, snapshot);
      continue;
    }
    const insert = db.prepare(insertSql(table));
    try {
      for (const row of table.rows?.(snapshot) ?? []) insert.run(row);
    } finally {
      insert.free();
    }
  }
  db.run('COMMIT');
  // No ANALYZE: its statistics cost a tenth of the load, and with one or two
  // indexes per table SQLite's default choices are the right ones.
  for (const table of TABLES) for (const sql of createIndexSql(table)) db.run(sql);
}

const pragmaNumber = (db: Database, pragma: string) => Number(db.exec(`PRAGMA ${pragma}`)[0]?.values[0]?.[0] ?? 0);

/**
 * Makes a loaded database read-only for the queries: query_only refuses every
 * write (temp tables included), even from a statement that passed the check;
 * SQLite's heap is capped at the tables plus QUERY_HEAP_LIMIT.
 */
export function lockDown(db: Database): void {
  const tableBytes = pragmaNumber(db, 'temp.page_count') * pragmaNumber(db, 'temp.page_size');
  db.run(`PRAGMA hard_heap_limit = ${tableBytes + QUERY_HEAP_LIMIT}`);
  db.run('PRAGMA query_only = 1');
}
