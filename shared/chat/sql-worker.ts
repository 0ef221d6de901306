// The worker thread that holds the chat assistant's SQL snapshot
// (shared/chat/sql.ts starts it). SQLite runs here so that the main thread can
// stop a runaway query: sql.js has no progress handler or interrupt, so the
// only way to stop a statement is to terminate the thread running it.
//
// Started with workerData { wasmPath } (the sql.js .wasm file to load);
// answers one request at a time:
//   load  { snapshot } → {}  builds the database from a packed snapshot
//         (sql-snapshot.ts packSnapshot; sql-load.ts)
//   query { sql, rowLimit, cellChars, columnLimit, resultChars } → { columns, rows, truncated, note? }
//         (sql-query.ts runQuery)
// Failures answer { error: { kind, message } }: kind 'refused' or 'sqlite' is
// about the query (message for the model), 'fatal' means this worker is broken.
// A worker stopped mid-query is replaced by a new one that loads the same
// snapshot (the main thread keeps it).
//
// Run from source under tsx (sql-worker.ts) or, in a Lambda, as the bundle
// sql-worker.mjs that the build emits beside index.mjs (see sql.ts).
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import type { Database, SqlJsStatic } from 'sql.js';
import { loadSnapshot, lockDown } from './sql-load.js';
import { QueryProblem, runQuery, type QueryBounds, type QueryRows } from './sql-query.js';
import type { SnapshotInput } from './sql-snapshot.js';

export interface SqlWorkerData {
  wasmPath: string;
}

export type SqlWorkerRequest = { id: number; op: 'load'; snapshot: SnapshotInput } | ({ id: number; op: 'query'; sql: string } & QueryBounds);

export type SqlWorkerError = { kind: 'refused' | 'sqlite' | 'fatal'; message: string };

export type SqlWorkerReply = { id: number; error: SqlWorkerError } | { id: number; op: 'load' } | ({ id: number; op: 'query' } & QueryRows);

async function startSqlJs(wasmPath: string): Promise<SqlJsStatic> {
  // sql.js's Node glue reads CommonJS's __dirname while it loads; an ES module
  // bundle has none. It only uses it to find the .wasm, which it is handed here.
  const scope = globalThis as { __dirname?: string };
  scope.__dirname ??= dirname(fileURLToPath(import.meta.url));
  // Imported here, after the line above (a static import would run first).
  const { default: initSqlJs } = await import('sql.js');
  const wasm = readFileSync(wasmPath);
  return initSqlJs({ wasmBinary: wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer });
}

function serve(port: NonNullable<typeof parentPort>, data: SqlWorkerData): void {
  const engine = startSqlJs(data.wasmPath);
  engine.catch(() => {}); // reported to each request below
  let db: Database | undefined;

  async function handle(request: SqlWorkerRequest): Promise<SqlWorkerReply> {
    const SQL = await engine;
    switch (request.op) {
      case 'load': {
        db?.close();
        db = new SQL.Database();
        loadSnapshot(db, request.snapshot);
        lockDown(db);
        return { id: request.id, op: 'load' };
      }
      case 'query': {
        if (!db) throw new Error('no database loaded');
        return { id: request.id, op: 'query', ...runQuery(db, request.sql, request) };
      }
    }
  }

  port.on('message', (request: SqlWorkerRequest) => {
    handle(request).then(
      (reply) => port.postMessage(reply),
      (error: unknown) => {
        const reply: SqlWorkerReply = {
          id: request.id,
          error:
            error instanceof QueryProblem
              ? { kind: error.kind, message: error.message }
              : { kind: 'fatal', message: error instanceof Error ? `${error.name}: ${error.message}` : String(error) },
        };
        port.postMessage(reply);
      },
    );
  });
}

if (parentPort && (workerData as Partial<SqlWorkerData> | undefined)?.wasmPath) serve(parentPort, workerData as SqlWorkerData);
