// Read-only SQL over a snapshot of the fleet, for the chat assistant's run_sql
// tool. The snapshot is loaded into an embedded SQLite (sql.js: SQLite compiled
// to WebAssembly) that lives in a worker thread (sql-worker.ts), because this
// build of sql.js exposes neither sqlite3_progress_handler nor
// sqlite3_interrupt: the only way to stop a runaway query is to terminate the
// thread running it. The snapshot is kept here (as the worker loads it:
// sql-snapshot.ts packSnapshot), and a replacement worker loads it again.
//
// Files at run time (both located like shared/rules/defaults.ts locates rules,
// relative to this module's URL, i.e. to the bundle in Lambda):
// - the worker: `sql-worker.mjs` beside the bundle that contains this module
//   (the Lambda build emits it from shared/chat/sql-worker.ts); from source,
//   `sql-worker.ts` beside this file, run under tsx's loader;
// - SQLite itself: `sql-wasm.wasm` beside the bundle (the build copies
//   node_modules/sql.js/dist/sql-wasm.wasm); from source, that file in node_modules.
//
// Defences: one statement (split by SQLite, so `;` in a literal is fine) that
// is a SELECT; `PRAGMA query_only` on the connection anyway; rows, cells, SQL
// length, time and SQLite's heap bounded; columns and the characters of a
// result in all too (sql-query.ts readRows).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { packSnapshot, type FleetSnapshot, type SnapshotInput } from './sql-snapshot.js';
import { schemaText, snapshotStats } from './sql-tables.js';

export type { FleetSnapshot };
import type { SqlWorkerData, SqlWorkerError, SqlWorkerReply, SqlWorkerRequest } from './sql-worker.js';

export interface SqlResult {
  columns: string[];
  rows: (string | number | null)[][];
  row_count: number;
  truncated: boolean;
  /** For the model: columns left out, or rows stopped by the result's size bound. */
  note?: string;
  duration_ms: number;
}

export interface FleetDatabase {
  /** The schema as text for the model: every table, its columns with types and one-line meanings, and 2-3 example queries. */
  readonly schema: string;
  /** The first load of the snapshot into SQLite: rejects when it fails (the queries waiting for it fail too). */
  readonly loaded: Promise<void>;
  query(sql: string, options?: { rowLimit?: number; timeoutMs?: number }): Promise<SqlResult>;
  close(): Promise<void>;
  /** Closes once the queries already asked of it have run: a newer snapshot replaced it, and another loop may be mid-query. */
  retire(): Promise<void>;
}

/** A query refused or failed: the message is for the model (what was wrong, how to fix). */
export class SqlRefused extends Error {
  override readonly name = 'SqlRefused';
}

/**
 * Defaults: rows returned, time per query, characters per cell, characters of SQL; columns
 * kept and characters of cells read in all (what the worker builds and posts, whatever the
 * query: run_sql's answer is cut at 12,000 characters anyway).
 */
export const SQL_LIMITS: { rowLimit: number; timeoutMs: number; cellChars: number; maxSqlChars: number; columnLimit: number; resultChars: number } =
  Object.freeze({
    rowLimit: 200,
    timeoutMs: 2000,
    cellChars: 500,
    maxSqlChars: 5000,
    columnLimit: 100,
    resultChars: 64_000,
  });

/** Bounds of the per-query options. */
const MAX_ROW_LIMIT = 10_000;
const MAX_TIMEOUT_MS = 60_000;

// ---------------------------------------------------------------- where the files are

/** What a Lambda build puts beside the bundle that contains this module. */
export const SQL_RUNTIME_FILES = { worker: 'sql-worker.mjs', wasm: 'sql-wasm.wasm' } as const;

const here = dirname(fileURLToPath(import.meta.url));
const requireHere = createRequire(import.meta.url);

interface WorkerEntry {
  /** A file to run, or (eval) the code of a script that starts it. */
  code: string;
  eval: boolean;
}

let workerEntry: WorkerEntry | undefined;
let wasmPath: string | undefined;

/**
 * The bundled worker beside a Lambda bundle; else the source file, started
 * through tsx's tsImport (Node 20 applies `--import tsx` in a worker's
 * execArgv only after the worker's entry module has failed to load).
 */
function locateWorker(): WorkerEntry {
  if (workerEntry) return workerEntry;
  const bundled = join(here, SQL_RUNTIME_FILES.worker);
  const source = join(here, 'sql-worker.ts');
  if (existsSync(bundled)) return (workerEntry = { code: bundled, eval: false });
  if (!existsSync(source)) throw new Error(`SQL worker not found: looked for ${bundled} (beside a bundle) and ${source} (source)`);
  let tsxApi: string;
  try {
    // The ES module build of tsx's API (require.resolve would give its CommonJS build).
    tsxApi = pathToFileURL(join(dirname(requireHere.resolve('tsx/package.json')), 'dist', 'esm', 'api', 'index.mjs')).href;
  } catch {
    throw new Error(`SQL worker ${source} needs tsx to run from source, and tsx is not installed; a bundle needs ${SQL_RUNTIME_FILES.worker} beside it`);
  }
  const url = JSON.stringify(pathToFileURL(source).href);
  return (workerEntry = { code: `import(${JSON.stringify(tsxApi)}).then(({ tsImport }) => tsImport(${url}, ${url}));`, eval: true });
}

/** sql.js's WebAssembly: beside a Lambda bundle, else from node_modules. */
function locateWasm(): string {
  if (wasmPath) return wasmPath;
  const beside = join(here, SQL_RUNTIME_FILES.wasm);
  if (existsSync(beside)) return (wasmPath = beside);
  try {
    return (wasmPath = requireHere.resolve('sql.js/dist/sql-wasm.wasm'));
  } catch {
    throw new Error(`${SQL_RUNTIME_FILES.wasm} not found: looked beside ${here} and in node_modules/sql.js/dist`);
  }
}

// ---------------------------------------------------------------- one worker thread

/** A failure the worker reported (kind 'refused' | 'sqlite': about the query; 'fatal': the worker is broken). */
class WorkerFailure extends Error {
  constructor(
    readonly kind: SqlWorkerError['kind'],
    message: string,
  ) {
    super(message);
  }
}

type Op = SqlWorkerRequest['op'];
type RequestOf<O extends Op> = Omit<Extract<SqlWorkerRequest, { op: O }>, 'id'>;
type ReplyOf<O extends Op> = Extract<SqlWorkerReply, { op: O }>;

/** A worker thread with request/reply by id. Unreferenced while idle, so an idle database never keeps a process alive (one loading does). */
class SqlWorker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (reply: SqlWorkerReply) => void; reject: (error: Error) => void }>();
  private nextId = 1;
  private failure: Error | undefined;

  constructor() {
    const entry = locateWorker();
    const workerData: SqlWorkerData = { wasmPath: locateWasm() };
    this.worker = new Worker(entry.code, { workerData, eval: entry.eval });
    this.worker.unref();
    this.worker.on('message', (reply: SqlWorkerReply) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) this.worker.unref();
      waiting.resolve(reply);
    });
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => this.fail(new Error(`the SQL worker exited (code ${code})`)));
  }

  request<O extends Op>(message: { op: O } & RequestOf<O>): Promise<ReplyOf<O>> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<SqlWorkerReply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ ...message, id });
    }).then((reply) => {
      if ('error' in reply) throw new WorkerFailure(reply.error.kind, reply.error.message);
      return reply as ReplyOf<O>;
    });
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiting of this.pending.values()) waiting.reject(this.failure);
    this.pending.clear();
  }

  async terminate(): Promise<void> {
    this.fail(new Error('the SQL worker was stopped'));
    await this.worker.terminate();
  }
}

// ---------------------------------------------------------------- the database

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`;

const timeoutMessage = (ms: number) =>
  `The query took longer than ${seconds(ms)} and was stopped. Narrow it down: filter early on keys ` +
  '(metric_key, cluster_id and day in metric_daily; starts_at in alerts), join on cluster_id, aggregate before joining, ' +
  'add a LIMIT, and avoid cross joins and unbounded recursive CTEs.';

function positiveInt(value: number | undefined, fallback: number, max: number): number {
  return value === undefined || !Number.isFinite(value) || value < 1 ? fallback : Math.min(Math.floor(value), max);
}

class SnapshotDatabase implements FleetDatabase {
  /** The worker that has the snapshot loaded (or is loading it); undefined after a failed load, retried on the next query. */
  private current: Promise<SqlWorker> | undefined;
  /** That worker, loaded or not, so that closing stops a load too. */
  private worker: SqlWorker;
  /** Queries run one at a time: a timeout stops the whole worker. */
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  readonly schema: string;
  readonly loaded: Promise<void>;

  constructor(
    /** The packed snapshot, for loading a replacement worker. */
    private readonly input: SnapshotInput,
    worker: SqlWorker,
  ) {
    this.worker = worker;
    // The load first: the worker runs it while this thread counts the schema's rows.
    this.current = this.load(worker);
    this.loaded = this.current.then(() => undefined);
    this.loaded.catch(() => undefined); // a caller may not ask; the queries report it
    this.schema = schemaText(snapshotStats(input), SQL_LIMITS);
  }

  query(sql: string, options: { rowLimit?: number; timeoutMs?: number } = {}): Promise<SqlResult> {
    const result = this.queue.then(() => this.run(sql, options));
    this.queue = result.catch(() => undefined);
    return result;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.current = undefined;
    await this.worker.terminate();
  }

  async retire(): Promise<void> {
    // Queries asked for while it drained are waited for too (a loop that took it just before the rebuild).
    for (let drained = this.queue; ; drained = this.queue) {
      await drained;
      if (this.queue === drained) return this.close();
    }
  }

  private ready(): Promise<SqlWorker> {
    if (!this.current) {
      this.worker = new SqlWorker();
      this.current = this.load(this.worker);
    }
    return this.current;
  }

  /** `worker` loading the snapshot; a failed load is retried by the next query rather than remembered. */
  private load(worker: SqlWorker): Promise<SqlWorker> {
    const loading = (async () => {
      try {
        await worker.request({ op: 'load', snapshot: this.input });
        return worker;
      } catch (error) {
        await worker.terminate();
        if (this.closed) throw new Error('the fleet database is closed');
        throw new Error(`loading the fleet snapshot failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    })();
    loading.catch(() => {
      if (this.current === loading) this.current = undefined;
    });
    return loading;
  }

  /** Stops a worker (runaway query, broken engine) and starts loading a fresh one at once. */
  private replace(worker: SqlWorker): void {
    void worker.terminate();
    this.current = undefined;
    if (!this.closed) void this.ready().catch(() => undefined);
  }

  private async run(sql: string, options: { rowLimit?: number; timeoutMs?: number }): Promise<SqlResult> {
    if (this.closed) throw new Error('the fleet database is closed');
    if (typeof sql !== 'string' || sql.trim() === '') throw new SqlRefused('No SQL given: send one SELECT statement.');
    if (sql.length > SQL_LIMITS.maxSqlChars) {
      throw new SqlRefused(`The SQL is ${sql.length} characters long; the limit is ${SQL_LIMITS.maxSqlChars}. Send a shorter statement.`);
    }
    const rowLimit = positiveInt(options.rowLimit, SQL_LIMITS.rowLimit, MAX_ROW_LIMIT);
    const timeoutMs = positiveInt(options.timeoutMs, SQL_LIMITS.timeoutMs, MAX_TIMEOUT_MS);
    const worker = await this.ready();
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    try {
      const { cellChars, columnLimit, resultChars } = SQL_LIMITS;
      const outcome = await Promise.race([worker.request({ op: 'query', sql, rowLimit, cellChars, columnLimit, resultChars }), timedOut]);
      if (outcome === 'timeout') {
        this.replace(worker);
        throw new SqlRefused(timeoutMessage(timeoutMs));
      }
      return {
        columns: outcome.columns,
        rows: outcome.rows,
        row_count: outcome.rows.length,
        truncated: outcome.truncated,
        ...(outcome.note ? { note: outcome.note } : {}),
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
      };
    } catch (error) {
      if (error instanceof SqlRefused) throw error;
      if (error instanceof WorkerFailure && error.kind !== 'fatal') throw new SqlRefused(error.message);
      if (this.closed) throw new Error('the fleet database is closed');
      // The engine broke on this query (a trap, the thread died): a fresh worker takes over.
      this.replace(worker);
      throw new SqlRefused(
        `The SQL engine failed on this query (${error instanceof Error ? error.message : String(error)}) and was restarted. Try a simpler query.`,
      );
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * A snapshot as a SQLite database in a worker thread. It answers as soon as it has the snapshot: the
 * schema text is counted from the snapshot, so the model's first call (which carries it) need not
 * wait for the load (5-7 s for 10,000 clusters), and queries wait for it instead. The worker starts
 * (and compiles SQLite) first, so hand over the snapshot's promise while it is still being read.
 * Rejects when the snapshot does or the worker's file is missing; a load that fails (SQLite that
 * does not start among the causes) rejects `loaded` and the queries waiting for it, and the next
 * query loads again.
 */
export async function openFleetDatabase(snapshot: FleetSnapshot | PromiseLike<FleetSnapshot>): Promise<FleetDatabase> {
  const reading = Promise.resolve(snapshot);
  reading.catch(() => undefined); // awaited below; a failure while the worker cannot start must not go unhandled
  const worker = new SqlWorker();
  try {
    // Kept for replacement workers, so posted as a copy.
    return new SnapshotDatabase(packSnapshot(await reading), worker);
  } catch (error) {
    await worker.terminate();
    throw error;
  }
}
