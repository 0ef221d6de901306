// The tables a function declares (a route group's `tables`, a worker's in shared/workers.ts),
// enforced on every DynamoDB request it makes, as IAM enforces the grants the stack derives
// from the same declarations. DynamoDB Local checks no IAM: without this, a group reading a
// table it does not declare works in `npm start` and in every test, and is an AccessDenied
// (a 500) only on AWS. Requests made outside a function (tests, the local runtime's setup)
// are not checked.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { TableAccess } from '../http/route.js';
import { coreSettings } from '../config/core.js';
import { LEASES, type Lease, type TableName } from './tables.js';

/** What a function declares: its tables, and with `locks` the lease locks it may touch. */
export interface TableDeclaration {
  readonly tables: Partial<Record<TableName, TableAccess>>;
  readonly leases?: readonly Lease[];
}

interface Declared {
  owner: string;
  tables: Partial<Record<TableName, TableAccess>>;
  /** The lock items' partition keys it may reach (LEASES). */
  leaseKeys: readonly string[];
}

const declared = new AsyncLocalStorage<Declared>();

/** Whether `key` is one LEASES names: a pattern ending in `*` (as IAM's StringLike reads it) takes any text after. */
const leaseMatches = (pattern: string, key: string) => (pattern.endsWith('*') ? key.startsWith(pattern.slice(0, -1)) : key === pattern);

/** Runs `work` as function `owner`, whose DynamoDB requests may reach only its declared tables (and lease locks). */
export function withTableAccess<T>(owner: string, { tables, leases = [] }: TableDeclaration, work: () => T): T {
  return declared.run({ owner, tables, leaseKeys: leases.map((lease) => LEASES[lease]) }, work);
}

/** What IAM answers a request the grants do not cover. */
export class TableAccessDenied extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AccessDeniedException';
  }
}

type Input = Record<string, unknown>;

/**
 * The operations client.ts makes, by the access they need; IAM's actions have the same
 * names (`dynamodb:GetItem`), and the stack grants exactly these (ACCESS_OPERATIONS).
 * A transaction needs its items' own actions (PutItem for a put, ConditionCheckItem for a
 * condition check); nothing scans or reads streams.
 */
export const TABLE_OPERATIONS = {
  read: ['GetItem', 'Query', 'BatchGetItem', 'ConditionCheckItem'],
  write: ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem'],
} as const;

/**
 * What each declared access allows. `append` is for a log that is only ever added to (the
 * audit table: shared/db/audit.ts puts new entries, alone or in a transaction): PutItem
 * only, so its writers cannot update, delete or batch-rewrite entries; `readappend` also
 * reads it (the settings group lists it). `readupdate` reads and updates: no put, batch write or
 * delete (the recompute worker's upkeep of the alerts' firing index), though an UpdateItem can
 * set any attribute and create an item that does not exist. `readputupdate` reads, puts and
 * updates, never deletes or batch-writes: the LLM ledger's writers (calls put, spend claimed
 * and given back by update), so none can erase what the AI cost.
 */
export const ACCESS_OPERATIONS: Readonly<Record<TableAccess, readonly string[]>> = {
  read: TABLE_OPERATIONS.read,
  append: ['PutItem'],
  readappend: [...TABLE_OPERATIONS.read, 'PutItem'],
  readupdate: [...TABLE_OPERATIONS.read, 'UpdateItem'],
  readputupdate: [...TABLE_OPERATIONS.read, 'PutItem', 'UpdateItem'],
  readwrite: [...TABLE_OPERATIONS.read, ...TABLE_OPERATIONS.write],
};

const WRITES: ReadonlySet<string> = new Set(TABLE_OPERATIONS.write);
/** What a function may call at all: the operations, and transactions of them (checked item by item). */
const GRANTED: ReadonlySet<string> = new Set([...TABLE_OPERATIONS.read, ...TABLE_OPERATIONS.write, 'TransactWriteItems']);
/** The action IAM checks for each kind of transaction item. */
const TRANSACT_ACTIONS: Readonly<Record<string, string>> = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem' };

/** A table a request reaches, the action IAM checks on it, and the partition keys it names there (read for the locks table alone). */
type Reached = [table: string, action: string, partitionKeys: () => unknown[]];

/** An item's or key's partition key (`pk`), as the wire carries it (`{ "S": … }`) or as given. */
const partitionKeyOf = (item: unknown): unknown => {
  const pk = (item as { pk?: unknown } | undefined)?.pk;
  return pk && typeof pk === 'object' && 'S' in pk ? (pk as { S: unknown }).S : pk;
};

/** The partition keys a request names: its Key or Item, a batch's keys and items, the value a query's key condition gives `pk`. */
function partitionKeys(request: Record<string, unknown>): unknown[] {
  if (request.Key || request.Item) return [partitionKeyOf(request.Key ?? request.Item)];
  if (Array.isArray(request.Keys)) return request.Keys.map(partitionKeyOf);
  const placeholder = /(?:^|[\s(])pk\s*=\s*(:\w+)/.exec(String(request.KeyConditionExpression ?? ''))?.[1];
  if (placeholder === undefined) return request.KeyConditionExpression === undefined ? [] : [undefined];
  return [partitionKeyOf({ pk: (request.ExpressionAttributeValues as Record<string, unknown> | undefined)?.[placeholder] })];
}

/** The tables a request reaches. */
function reached(operation: string, input: Input): Reached[] {
  if (Array.isArray(input.TransactItems))
    return (input.TransactItems as Record<string, (Record<string, unknown> & { TableName?: string }) | undefined>[]).flatMap((item) =>
      Object.entries(item).flatMap(([kind, action]) =>
        action?.TableName ? [[action.TableName, TRANSACT_ACTIONS[kind] ?? kind, () => partitionKeys(action)] as Reached] : [],
      ),
    );
  if (input.RequestItems && typeof input.RequestItems === 'object')
    return Object.entries(input.RequestItems as Record<string, unknown>).map(([table, request]): Reached => {
      const writes = Array.isArray(request) ? (request as Record<string, { Item?: unknown; Key?: unknown } | undefined>[]) : undefined;
      const keys = () =>
        writes ? writes.map((w) => partitionKeyOf(w.PutRequest?.Item ?? w.DeleteRequest?.Key)) : partitionKeys((request ?? {}) as Record<string, unknown>);
      return [table, operation, keys];
    });
  return typeof input.TableName === 'string' ? [[input.TableName, operation, () => partitionKeys(input)]] : [];
}

/** Throws TableAccessDenied when the running function's declaration does not cover the request. */
export function checkTableAccess(operation: string, input: Input): void {
  const fn = declared.getStore();
  if (!fn) return;
  // No function is granted another operation (a Scan, a stream read): IAM would refuse it on any table.
  if (!GRANTED.has(operation))
    throw new TableAccessDenied(
      `${fn.owner} is granted no ${operation} on ${String(input.TableName ?? 'any table')}: no function is (shared/db/access.ts, TABLE_OPERATIONS; it would be an AccessDenied on AWS)`,
    );
  const prefix = coreSettings().tablePrefix;
  for (const [physical, action, keys] of reached(operation, input)) {
    const table = (physical.startsWith(prefix) ? physical.slice(prefix.length) : physical) as TableName;
    const access = fn.tables[table];
    if (access && ACCESS_OPERATIONS[access].includes(action)) {
      if (table !== 'locks') continue;
      // IAM's ForAllValues:StringLike on dynamodb:LeadingKeys: every key the request names is one of the declared leases.
      // A key it cannot read (none, or not a string) is denied: IAM would see some other key there.
      const named = keys();
      const denied = named.findIndex((key) => typeof key !== 'string' || !fn.leaseKeys.some((pattern) => leaseMatches(pattern, key)));
      if (denied < 0) continue;
      throw new TableAccessDenied(
        `${fn.owner} declares no lease lock ${String(named[denied])} (its leases: ${fn.leaseKeys.length ? fn.leaseKeys.join(', ') : 'none'}; it would be an AccessDenied on AWS)`,
      );
    }
    const write = WRITES.has(action);
    throw new TableAccessDenied(
      access === 'append' || access === 'readappend' || access === 'readupdate' || access === 'readputupdate'
        ? `${fn.owner} declares ${access} access to table ${table}, which grants no ${action} (it would be an AccessDenied on AWS)`
        : `${fn.owner} declares no ${write ? 'write' : 'read'} access to table ${table} (it would be an AccessDenied on AWS)`,
    );
  }
}
