// Running one query of run_sql on a loaded snapshot (sql-load.ts), in the
// worker thread (sql-worker.ts): the guard first (sql-guard.ts), then sql.js
// prepares only the first statement, and at most rowLimit rows are read, each
// cell cut for the model, the first columnLimit columns kept and reading stopped
// before the cells pass resultChars in all. Time is bounded by the main thread
// (sql.ts), which stops the whole worker.
import type { Database, Statement } from 'sql.js';
import { NO_STATEMENT, refusalBeforePrepare, refusalOfRemainder } from './sql-guard.js';
import { TABLES } from './sql-tables.js';
import { cutText } from '../text.js';
import type { SqlValue } from './sql-values.js';

/** Why a query was not answered: `refused` by the check, or an `sqlite` error. The message is for the model. */
export class QueryProblem extends Error {
  constructor(
    readonly kind: 'refused' | 'sqlite',
    message: string,
  ) {
    super(message);
  }
}

export interface QueryRows {
  columns: string[];
  rows: SqlValue[][];
  truncated: boolean;
  /** For the model, when columns were left out or the size bound stopped the rows. */
  note?: string;
}

export interface QueryBounds {
  rowLimit: number;
  cellChars: number;
  columnLimit: number;
  resultChars: number;
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

function sqliteProblem(error: unknown): QueryProblem {
  // The engine itself failing (a WebAssembly trap, an Emscripten abort) is no query error: the worker gets replaced.
  if (error instanceof Error && (error.name === 'RuntimeError' || error.message.startsWith('Aborted('))) throw error;
  const message = messageOf(error);
  const hint = /no such (table|column)|ambiguous column/i.test(message)
    ? `Use only the tables and columns of the schema (${TABLES.map((t) => t.name).join(', ')}); qualify a column that two joined tables share (s.cluster_id).`
    : /out of memory|too big/i.test(message)
      ? 'The query needs more memory than it may use: filter and aggregate before building large strings, sorts or joins.'
      : 'Check the statement against the schema given with the run_sql tool (SQLite dialect).';
  return new QueryProblem('sqlite', `SQLite error: ${message}. ${hint}`);
}

/** A cell as the model sees it: text cut at `cellChars` (ending in …), blobs described. */
export function cellOf(value: unknown, cellChars: number): SqlValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  const text = value instanceof Uint8Array ? `<blob of ${value.length} bytes>` : String(value);
  return cutText(text, cellChars);
}

/**
 * Checks and runs one query: one statement, a SELECT, at most `rowLimit` rows
 * read (one more tells whether there were more).
 *
 * The text is checked before SQLite sees any of it, because preparing a
 * statement is not harmless: SQLite applies flag pragmas while compiling them,
 * so merely preparing `PRAGMA query_only = 0` (or `PRAGMA hard_heap_limit = 0`)
 * would switch the defence off. So only the first statement is ever prepared,
 * and only once it reads as a SELECT; sql.js (SQLite's own tokenizer) then says
 * where that statement ends, so a `;` inside a literal is no separator, and any
 * further statement is refused without being prepared.
 */
export function runQuery(db: Database, sql: string, options: QueryBounds): QueryRows {
  const refusal = refusalBeforePrepare(sql);
  if (refusal !== null) throw new QueryProblem('refused', refusal);
  const statements = db.iterateStatements(sql);
  // sql.js's StatementIterator implements the iterator protocol, whose return()
  // frees the current statement and the iterator's copy of the text (the class's
  // typings leave return() out; Iterator<Statement> declares it).
  const iterator: Iterator<Statement> = statements;
  try {
    let statement: Statement;
    try {
      const first = statements.next();
      if (first.done) throw new QueryProblem('refused', NO_STATEMENT);
      statement = first.value;
    } catch (error) {
      throw error instanceof QueryProblem ? error : sqliteProblem(error);
    }
    const more = refusalOfRemainder(statements.getRemainingSQL());
    if (more !== null) throw new QueryProblem('refused', more);
    return readRows(statement, options);
  } finally {
    iterator.return?.();
  }
}

/** A cell's characters as the result counts them (near its JSON length). */
const charsOf = (cell: SqlValue) => (typeof cell === 'string' ? cell.length + 2 : String(cell).length);

/**
 * The rows, bounded in total as well as per row and cell: rows × columns × cellChars alone let
 * one 4 KB statement (SELECT x,x,…, 1,990 times, over 100 rows) build a 100-million-character
 * result after the time limit had stopped counting, for a tool answer cut to 12,000.
 */
function readRows(statement: Statement, { rowLimit, cellChars, columnLimit, resultChars }: QueryBounds): QueryRows {
  try {
    const names = statement.getColumnNames();
    const columns = names.slice(0, columnLimit);
    const rows: SqlValue[][] = [];
    let chars = columns.reduce((n, name) => n + name.length + 3, 0);
    let truncated = false;
    let full = false;
    while (statement.step()) {
      if (rows.length === rowLimit) {
        truncated = true;
        break;
      }
      const row = statement
        .get()
        .slice(0, columnLimit)
        .map((v) => cellOf(v, cellChars));
      const size = row.reduce<number>((n, cell) => n + charsOf(cell), 0);
      // A row that would pass the bound is not kept (one row of columnLimit cut cells always fits).
      if (chars + size > resultChars) {
        truncated = full = true;
        break;
      }
      chars += size;
      rows.push(row);
    }
    const notes = [
      ...(names.length > columns.length ? [`Only the first ${columnLimit} of ${names.length} columns are shown: select the columns you need.`] : []),
      ...(full
        ? [`Stopped after ${rows.length} rows: the result reached its ${resultChars}-character bound. Select fewer or shorter columns, or aggregate.`]
        : []),
    ];
    return { columns, rows, truncated, ...(notes.length ? { note: notes.join(' ') } : {}) };
  } catch (error) {
    throw sqliteProblem(error);
  }
}
