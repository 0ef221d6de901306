// The tables a function declares (a route group's `tables`, a worker's in shared/workers.ts),
// enforced on every DynamoDB request it makes, as IAM enforces the grants the stack derives
// from the same declarations. DynamoDB Local checks no IAM: without this, a group reading a
// table it does not declare works in `npm start` and in every test, and is an AccessDenied
// (a 500) only on AWS. Requests made outside a function (tests, the local runtime's setup)
// are not checked.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { TableAccess } from '../http/route.js';
import { coreSettings } from '../config/core.js';
import type { TableName } from './tables.js';

interface Declared {
  owner: string;
  tables: Partial<Record<TableName, TableAccess>>;
}

const declared = new AsyncLocalStorage<Declared>();

/** Runs `work` as function `owner`, whose DynamoDB requests may reach only `tables`. */
export function withTableAccess<T>(owner: string, tables: Partial<Record<TableName, TableAccess>>, work: () => T): T {
  return declared.run({ owner, tables }, work);
}

/** What IAM answers a request the grants do not cover. */
export class TableAccessDenied extends Error {
  constructor(owner: string, table: string, write: boolean, operation?: string) {
    super(
      operation
        ? `${owner} is granted no ${operation} on ${table}: no function is (shared/db/access.ts, TABLE_OPERATIONS; it would be an AccessDenied on AWS)`
        : `${owner} declares no ${write ? 'write' : 'read'} access to table ${table} (it would be an AccessDenied on AWS)`,
    );
    this.name = 'AccessDeniedException';
  }
}

type Input = Record<string, unknown>;

/**
 * The operations client.ts makes, by the access they need; IAM's actions have the same
 * names (`dynamodb:GetItem`), and the stack grants exactly these: a declared `read` the
 * first list, `readwrite` both. A transaction needs its items' own actions
 * (ConditionCheckItem for a condition check); nothing scans or reads streams.
 */
export const TABLE_OPERATIONS = {
  read: ['GetItem', 'Query', 'BatchGetItem', 'ConditionCheckItem'],
  write: ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem'],
} as const;

const WRITES: ReadonlySet<string> = new Set(TABLE_OPERATIONS.write);
/** What a function may call at all: the operations, and transactions of them (checked item by item). */
const GRANTED: ReadonlySet<string> = new Set([...TABLE_OPERATIONS.read, ...TABLE_OPERATIONS.write, 'TransactWriteItems']);

/** The tables a request reaches, and whether it writes each (by operation, as IAM's actions do). */
function reached(operation: string, input: Input): [table: string, write: boolean][] {
  const write = WRITES.has(operation);
  if (Array.isArray(input.TransactItems))
    return (input.TransactItems as Record<string, { TableName?: string } | undefined>[]).flatMap((item) =>
      Object.entries(item).flatMap(([kind, action]) => (action?.TableName ? [[action.TableName, kind !== 'ConditionCheck'] as [string, boolean]] : [])),
    );
  if (input.RequestItems && typeof input.RequestItems === 'object') return Object.keys(input.RequestItems).map((table) => [table, write]);
  return typeof input.TableName === 'string' ? [[input.TableName, write]] : [];
}

/** Throws TableAccessDenied when the running function's declaration does not cover the request. */
export function checkTableAccess(operation: string, input: Input): void {
  const fn = declared.getStore();
  if (!fn) return;
  // No function is granted another operation (a Scan, a stream read): IAM would refuse it on any table.
  if (!GRANTED.has(operation)) throw new TableAccessDenied(fn.owner, String(input.TableName ?? 'any table'), false, operation);
  const prefix = coreSettings().tablePrefix;
  for (const [physical, write] of reached(operation, input)) {
    const table = (physical.startsWith(prefix) ? physical.slice(prefix.length) : physical) as TableName;
    const access = fn.tables[table];
    if (!access || (write && access !== 'readwrite')) throw new TableAccessDenied(fn.owner, table, write);
  }
}
