// A typed wrapper over DynamoDB: table names resolved from the logical names, items
// converted to and from DynamoDB's JSON (attributes.ts), pagination and batch retries done
// once, and conditional failures surfaced as a typed error. Repositories build on this;
// nothing else talks to DynamoDB. Requests go out through shared/aws/json-call.ts (signed,
// retried and answered as the SDK's client would), not the SDK's DynamoDB client, whose
// load was the largest part of every route group's cold start (README.md here).
//
// Locally and in tests requests reach DynamoDB Local through the standard
// AWS_ENDPOINT_URL_DYNAMODB variable, so this module never knows where it runs.
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import type { DeleteCommandInput, PutCommandInput, QueryCommandInput, TransactWriteCommandInput, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { AwsError, awsJsonCall, type AwsJsonService } from '../aws/json-call.js';
import { coreSettings } from '../config/core.js';
import { checkTableAccess } from './access.js';
import { fromItem, toItem, type WireItem } from './attributes.js';
import { physicalTableName, type TableName } from './tables.js';

export { base64Decoder, type WireAttribute, type WireItem } from './attributes.js';

export type Item = Record<string, unknown>;
export interface Key {
  pk: string;
  sk: string;
}

const DYNAMODB: AwsJsonService = {
  signingName: 'dynamodb',
  targetPrefix: 'DynamoDB_20120810',
  jsonVersion: '1.0',
  endpoint: () => coreSettings().dynamoEndpoint,
};

/** An item's key in wire form (its pk and sk only, whatever else the object carries). */
const wireKey = (key: Key): WireItem => toItem({ pk: key.pk, sk: key.sk });

/** One DynamoDB operation, once the running function's declared tables cover it (access.ts). */
function call<T = Record<string, unknown>>(operation: string, input: Record<string, unknown>): Promise<T> {
  checkTableAccess(operation, input);
  return awsJsonCall<T>(DYNAMODB, operation, input);
}

/**
 * A conditional write lost: an item was not in the expected state. For a
 * transaction, `failed` holds the indexes of the actions whose condition failed.
 */
export class ConditionFailed extends Error {
  constructor(readonly failed: number[] = []) {
    super('conditional write failed');
    this.name = 'ConditionFailed';
  }
}

/**
 * DynamoDB kept refusing for lack of capacity (a throttled table, index or partition) after the
 * retries: nothing of the request was applied (a batch's items not yet written excepted: `batchPut`).
 * The route answers 503 with Retry-After (shared/http/middleware.ts).
 */
export class Throttled extends Error {
  constructor(what: string) {
    super(`DynamoDB kept throttling ${what}`);
    this.name = 'Throttled';
  }
}

/** A cancelled transaction's reason codes for capacity: retried like a conflict, with a longer backoff. */
const THROTTLED_REASONS = new Set(['ThrottlingError', 'ProvisionedThroughputExceeded']);

/** The code of each action of a cancelled transaction (`None` for those that would have applied); empty for any other error. */
function cancellationReasons(error: unknown): string[] {
  if (!(error instanceof AwsError) || error.name !== 'TransactionCanceledException') return [];
  const reasons = error.fields.CancellationReasons;
  return Array.isArray(reasons) ? reasons.map((r: { Code?: unknown } | null) => String(r?.Code ?? 'None')) : [];
}

/** Attempts of a single-item write that meets a transaction holding its item. */
const SINGLE_WRITE_ATTEMPTS = 5;

/**
 * A single-item write (put, update, delete): ConditionFailed when its condition does not hold. One
 * that meets a transaction holding its item is refused by DynamoDB with TransactionConflictException,
 * unapplied, and the client (shared/aws/) does not retry it: retried here with backoff, so no caller
 * meets it (a task claim, a grouping write, a marker move); WriteConflict (409) if it keeps meeting one.
 */
async function singleWrite<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await retrying(
      () => conditional(run),
      (error) => (error as Error).name === 'TransactionConflictException',
      SINGLE_WRITE_ATTEMPTS,
    );
  } catch (error) {
    if ((error as Error).name === 'TransactionConflictException') throw new WriteConflict();
    throw error;
  }
}

async function conditional<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof AwsError && error.name === 'ConditionalCheckFailedException') throw new ConditionFailed([0]);
    const failed = cancellationReasons(error).flatMap((code, i) => (code === 'ConditionalCheckFailed' ? [i] : []));
    if (failed.length) throw new ConditionFailed(failed);
    throw error;
  }
}

export async function getItem<T extends Item>(table: TableName, key: Key, consistent = false): Promise<T | undefined> {
  const out = await call<{ Item?: WireItem }>('GetItem', {
    TableName: physicalTableName(table),
    Key: wireKey(key),
    ConsistentRead: consistent,
  });
  return out.Item ? (fromItem(out.Item) as T) : undefined;
}

type PutOptions = Omit<PutCommandInput, 'TableName' | 'Item'>;

/** Put an item; throws ConditionFailed when `ConditionExpression` does not hold. */
export async function putItem(table: TableName, item: Key & Item, options: PutOptions = {}): Promise<void> {
  await singleWrite(() => call('PutItem', { ...withValues(options), TableName: physicalTableName(table), Item: toItem(item) }));
}

type UpdateOptions = Omit<UpdateCommandInput, 'TableName' | 'Key'>;

/** The parts of `SET #f0 = :f0, …` for each field: the clause, its attribute names and its values. */
export function setFields(fields: Record<string, unknown>): { set: string; names: Record<string, string>; values: Record<string, unknown> } {
  const keys = Object.keys(fields);
  return {
    set: `SET ${keys.map((_, i) => `#f${i} = :f${i}`).join(', ')}`,
    names: Object.fromEntries(keys.map((k, i) => [`#f${i}`, k])),
    values: Object.fromEntries(keys.map((k, i) => [`:f${i}`, fields[k]])),
  };
}

export async function updateItem<T extends Item>(table: TableName, key: Key, options: UpdateOptions): Promise<T | undefined> {
  const out = await singleWrite(() =>
    call<{ Attributes?: WireItem }>('UpdateItem', {
      ReturnValues: 'ALL_NEW',
      ...withValues(options),
      TableName: physicalTableName(table),
      Key: wireKey(key),
    }),
  );
  return out.Attributes ? (fromItem(out.Attributes) as T) : undefined;
}

type DeleteOptions = Omit<DeleteCommandInput, 'TableName' | 'Key'>;

export async function deleteItem(table: TableName, key: Key, options: DeleteOptions = {}): Promise<void> {
  await singleWrite(() => call('DeleteItem', { ...withValues(options), TableName: physicalTableName(table), Key: wireKey(key) }));
}

/**
 * A conditional write (`write`, on the item at `key`) that may meet itself: when its answer is lost
 * (a reset, a 500 after the write was applied), the client retries it, and the retry fails its
 * condition against the write it already made. So on ConditionFailed the item is read (consistently)
 * and `isOurs` says whether it holds what this write stored: a fresh token only this write carries
 * (a lease's rvn, a claim's owner). `written` with the write's `result`, or with the item `found` holding
 * it; not `written` when the condition failed for real. Other errors are thrown.
 */
export async function conditionalWrite<T>(
  table: TableName,
  key: Key,
  write: () => Promise<T>,
  isOurs: (item: Item) => boolean,
): Promise<{ written: true; result: T } | { written: true; found: Item } | { written: false }> {
  try {
    return { written: true, result: await write() };
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
    const item = await getItem(table, key, true);
    return item !== undefined && isOurs(item) ? { written: true, found: item } : { written: false };
  }
}

type QueryOptions = Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>;

export interface Page<T> {
  items: T[];
  /** Opaque cursor for the next page, absent on the last one. */
  next?: Record<string, unknown>;
}

export async function queryPage<T extends Item>(table: TableName, options: QueryOptions, start?: Record<string, unknown>): Promise<Page<T>> {
  const out = await call<QueryOutput>('Query', {
    ...withValues(options),
    TableName: physicalTableName(table),
    ExclusiveStartKey: start ? toItem(start) : undefined,
  });
  return { items: (out.Items ?? []).map((item) => fromItem(item) as T), next: out.LastEvaluatedKey ? fromItem(out.LastEvaluatedKey) : undefined };
}

/**
 * A read's projection of `fields`, by placeholders (some names are reserved words), and the
 * item's key: a projected item that does not fit its reader is named by it (MalformedItem).
 */
export const projection = (fields: readonly string[]) => {
  const names = [...new Set(['pk', 'sk', ...fields])];
  return {
    ProjectionExpression: names.map((_, i) => `#p${i}`).join(', '),
    ExpressionAttributeNames: Object.fromEntries(names.map((f, i) => [`#p${i}`, f])),
  };
};

/**
 * A time index's items (`gsi1pk` = `partition`, `gsi1sk` a key that starts with a time: `<created_at>#<id>`, an activity key) from `since`,
 * or between two sort keys, newest first: `fields` only, or whole without them.
 */
export function queryTimeIndex<T extends Item>(
  table: TableName,
  partition: string,
  range: { since: Date } | { from: string; to: string },
  fields?: readonly string[],
): Promise<T[]> {
  const between = 'from' in range;
  return queryAll<T>(table, {
    IndexName: 'gsi1',
    KeyConditionExpression: between ? 'gsi1pk = :pk AND gsi1sk BETWEEN :lo AND :hi' : 'gsi1pk = :pk AND gsi1sk >= :lo',
    ...(fields && projection(fields)),
    ExpressionAttributeValues: { ':pk': partition, ':lo': between ? range.from : range.since.toISOString(), ...(between && { ':hi': range.to }) },
    ScanIndexForward: false,
  });
}

/**
 * Follow LastEvaluatedKey until done or `limit` items are collected. Without a `Limit` or a
 * filter of its own, each page asks for what is still missing: a page is otherwise up to 1 MB,
 * whatever `limit`. (DynamoDB counts a Limit before the filter: a filtered read asking for what
 * it misses would go one item per request.)
 */
export async function queryAll<T extends Item>(table: TableName, options: QueryOptions, limit = Infinity): Promise<T[]> {
  const items: T[] = [];
  if (limit <= 0) return items;
  let start: Record<string, unknown> | undefined;
  do {
    const missing = options.Limit === undefined && !options.FilterExpression && Number.isFinite(limit) ? { Limit: limit - items.length } : {};
    const page = await queryPage<T>(table, { ...options, ...missing }, start);
    items.push(...page.items);
    start = page.next;
  } while (start && items.length < limit);
  return items.length > limit ? items.slice(0, limit) : items;
}

interface QueryOutput {
  Items?: WireItem[];
  LastEvaluatedKey?: WireItem;
}

/**
 * How many items a query matches (after its filter, if any), page by page: `Select: COUNT` sends
 * counts and no items. DynamoDB still reads (and charges) every item of the range, up to 1 MB a page.
 */
export async function queryCount(table: TableName, options: QueryOptions): Promise<number> {
  const input = { ...withValues(options), TableName: physicalTableName(table), Select: 'COUNT' };
  let count = 0;
  let start: WireItem | undefined;
  do {
    const out = await call<{ Count?: number; LastEvaluatedKey?: WireItem }>('Query', { ...input, ExclusiveStartKey: start });
    if (typeof out.Count !== 'number') throw new TypeError(`DynamoDB Query on ${input.TableName}: a count without a Count`);
    count += out.Count;
    start = out.LastEvaluatedKey;
  } while (start);
  return count;
}

/** The options of a request with their ExpressionAttributeValues in wire form. */
function withValues<O extends { ExpressionAttributeValues?: Record<string, unknown> }>(
  options: O,
): Omit<O, 'ExpressionAttributeValues'> & { ExpressionAttributeValues?: WireItem } {
  const { ExpressionAttributeValues: values, ...rest } = options;
  return values ? { ...rest, ExpressionAttributeValues: toItem(values) } : rest;
}

/**
 * `queryAll` for a read of thousands of items whose few attributes the caller decodes
 * itself (the refresh's 10,000 rollup cells of today): every item as DynamoDB sent it,
 * without converting every attribute to a value first (README.md here, "Wire reads").
 */
export async function queryAllWire(table: TableName, options: QueryOptions): Promise<WireItem[]> {
  const input = { ...withValues(options), TableName: physicalTableName(table) };
  const items: WireItem[] = [];
  let start: WireItem | undefined;
  do {
    const out = await call<QueryOutput>('Query', { ...input, ExclusiveStartKey: start });
    if (!Array.isArray(out.Items)) throw new TypeError(`DynamoDB Query on ${input.TableName}: an output without a list of items`);
    for (const item of out.Items) items.push(item);
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

const BATCH_SIZE = 25;
const MAX_BATCH_RETRIES = 8;

/** Write many items in batches of 25, retrying UnprocessedItems with backoff. Not atomic. */
export async function batchPut(table: TableName, items: (Key & Item)[]): Promise<void> {
  const name = physicalTableName(table);
  for (let i = 0; i < items.length; i += BATCH_SIZE) {
    let requests: unknown[] = items.slice(i, i + BATCH_SIZE).map((item) => ({ PutRequest: { Item: toItem(item) } }));
    for (let attempt = 0; requests.length > 0; attempt++) {
      // DynamoDB leaves items unprocessed when the table lacks capacity for them.
      if (attempt > MAX_BATCH_RETRIES) throw new Throttled(`a batch write: ${requests.length} items still unprocessed in ${name}`);
      if (attempt > 0) await sleep(Math.min(1000, 25 * 2 ** attempt));
      // What comes back unprocessed is already in wire form: it is sent again as it is.
      const out = await call<{ UnprocessedItems?: Record<string, unknown[]> }>('BatchWriteItem', { RequestItems: { [name]: requests } });
      requests = out.UnprocessedItems?.[name] ?? [];
    }
  }
}

const BATCH_GET_SIZE = 100;

/** Read many items by key (any order; only `fields` when given), 100 per request, retrying UnprocessedKeys. Missing keys are skipped. */
export async function batchGet<T extends Item>(table: TableName, keys: Key[], consistent = false, fields?: readonly string[]): Promise<T[]> {
  const name = physicalTableName(table);
  const found: T[] = [];
  for (let i = 0; i < keys.length; i += BATCH_GET_SIZE) {
    let pending: WireItem[] = keys.slice(i, i + BATCH_GET_SIZE).map(wireKey);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > MAX_BATCH_RETRIES) throw new Throttled(`a batch read: ${pending.length} keys still unprocessed in ${name}`);
      if (attempt > 0) await sleep(Math.min(1000, 25 * 2 ** attempt));
      const out = await call<{ Responses?: Record<string, WireItem[]>; UnprocessedKeys?: Record<string, { Keys?: WireItem[] }> }>('BatchGetItem', {
        RequestItems: { [name]: { Keys: pending, ConsistentRead: consistent, ...(fields && projection(fields)) } },
      });
      for (const item of out.Responses?.[name] ?? []) found.push(fromItem(item) as T);
      pending = out.UnprocessedKeys?.[name]?.Keys ?? [];
    }
  }
  return found;
}

/**
 * Runs `work` over `items` with at most `limit` in flight; results in input order. After a
 * failure no item is started, and the first failure is thrown only once every call in flight
 * has ended: a caller's cleanup (a write counter closed in `finally`) never runs while one of
 * its writes may still land.
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length && !failure) {
      const index = next++;
      try {
        results[index] = await work(items[index]!, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  });
  await Promise.all(runners);
  if (failure) throw failure.error;
  return results;
}

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * A write that kept losing to concurrent writers of the same items after its
 * retries. Like an escaped ConditionFailed, the error middleware answers it
 * with 409, never 500.
 */
export class WriteConflict extends Error {
  constructor() {
    super('the write kept conflicting with concurrent writes');
    this.name = 'WriteConflict';
  }
}

/** Attempts of an optimistic read-modify-write that lost to a concurrent writer. */
const OPTIMISTIC_ATTEMPTS = 8;

/**
 * Runs an optimistic read-modify-write (read, then write conditioned on what
 * was read) again, after a jittered backoff, each time a concurrent writer got
 * there first (ConditionFailed). `work` must read afresh on every call. The
 * last loss escapes as ConditionFailed, which the error middleware answers 409.
 */
export function retryOnConflict<T>(work: () => Promise<T>, attempts = OPTIMISTIC_ATTEMPTS): Promise<T> {
  return retrying(work, (error) => error instanceof ConditionFailed, attempts);
}

/** Runs `work` again after a jittered backoff while it fails with an error `retryable` accepts, `attempts` times at most; the last failure escapes. */
async function retrying<T>(work: () => Promise<T>, retryable: (error: unknown) => boolean, attempts: number): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!retryable(error) || attempt >= attempts) throw error;
      await sleep(backoffMs(attempt));
    }
  }
}

/** Exponential backoff with full jitter, so writers that collided do not collide again in step. */
function backoffMs(attempt: number): number {
  return Math.random() * Math.min(1000, 20 * 2 ** attempt);
}

/** After a transaction cancelled for capacity: longer, as DynamoDB takes a moment to add it (at most ≈ 3 s over the attempts). */
function throttledBackoffMs(attempt: number): number {
  return Math.random() * Math.min(2000, 100 * 2 ** attempt);
}

/** The pause after a write's `attempt`-th lost race before its next attempt (for loops that keep state between attempts). */
export const conflictBackoff = (attempt: number): Promise<void> => sleep(backoffMs(attempt));

/** Attempts of a transaction that lost to a concurrent one on the same items. */
const TRANSACTION_ATTEMPTS = 5;

/**
 * All-or-nothing write of up to 100 actions; ConditionFailed (with the failed indexes) when a condition
 * does not hold. A transaction cancelled only because another one held the
 * same items (TransactionConflict) or for capacity (ThrottlingError,
 * ProvisionedThroughputExceeded) is retried with backoff: its conditions are
 * evaluated afresh, so the retry either applies or fails on its conditions.
 * After TRANSACTION_ATTEMPTS, Throttled when capacity was among the reasons, else WriteConflict.
 *
 * Each attempt carries a ClientRequestToken (the caller's, else a fresh one, as the SDK made
 * one per send), sent again unchanged by the call's own retries: a transaction DynamoDB
 * committed whose answer was lost (a reset, a timeout) is answered as done when retried,
 * not applied twice or failed on its own conditions.
 */
export async function transactWrite(items: TransactItem[], clientRequestToken?: string): Promise<void> {
  const actions = items.map(wireAction);
  for (let attempt = 1; ; attempt++) {
    try {
      const token = clientRequestToken ?? randomUUID();
      await conditional(() => call('TransactWriteItems', { TransactItems: actions, ClientRequestToken: token }));
      return;
    } catch (error) {
      // Retried only when every action that failed lost to another transaction or to capacity: nothing applied.
      const failed = cancellationReasons(error).filter((code) => code !== 'None');
      const throttled = failed.some((code) => THROTTLED_REASONS.has(code));
      if (!failed.length || !failed.every((code) => code === 'TransactionConflict' || THROTTLED_REASONS.has(code))) throw error;
      if (attempt >= TRANSACTION_ATTEMPTS) throw throttled ? new Throttled(`a transaction of ${items.length} actions`) : new WriteConflict();
      await sleep(throttled ? throttledBackoffMs(attempt) : backoffMs(attempt));
    }
  }
}

/** A transaction's action with its item, key and values in wire form. */
function wireAction(action: TransactItem): Record<string, unknown> {
  const entries = Object.entries(action) as [string, { ExpressionAttributeValues?: Item; Item?: Item; Key?: Item } | undefined][];
  const [kind, body] = entries[0] ?? [];
  if (!kind || !body || entries.length !== 1) throw new TypeError('A transaction action names exactly one of Put, Update, Delete, ConditionCheck');
  const { Item: item, Key: key, ...rest } = withValues(body);
  return { [kind]: { ...rest, ...(item ? { Item: toItem(item) } : {}), ...(key ? { Key: toItem(key) } : {}) } };
}

/** Table name for building TransactItems by hand. */
export const tableName = physicalTableName;

/**
 * A cache generation marker (`pk CACHE, sk GENERATION` in `table`): read
 * strongly consistent, so it has moved for every write acknowledged before;
 * moved by `ADD`, alone (`bump`) or as the last action of the transaction that
 * makes the change (`action`), or after a run of lone writes (`afterWrites`).
 * A lone move that meets a transaction holding the marker is retried like
 * every single-item write (singleWrite).
 */
export function generationMarker(table: TableName) {
  const key = { pk: 'CACHE', sk: 'GENERATION' };
  const move = { UpdateExpression: 'ADD generation :one', ExpressionAttributeValues: { ':one': 1 } };
  const bump = async (): Promise<number> => Number((await updateItem(table, key, move))?.generation);
  return {
    current: async (): Promise<number> => Number((await getItem(table, key, true))?.generation ?? 0),
    bump,
    action: (): TransactItem => ({ Update: { TableName: physicalTableName(table), Key: key, ...move } }),
    /**
     * Runs `work`, which sets `writes.made` before its first write, and moves the marker after it if it
     * wrote: also when it failed, whose own error is then thrown (a failed move only goes to `report`).
     * When the move fails after a success, `unmoved` runs (what makes a later run move it) and the
     * move's error is thrown.
     */
    afterWrites: async <T>(
      work: (writes: { made: boolean }) => Promise<T>,
      { report, unmoved }: { report: (error: unknown) => void; unmoved?: () => Promise<void> },
    ): Promise<T> => {
      const writes = { made: false };
      let result: T;
      try {
        result = await work(writes);
      } catch (error) {
        if (writes.made) await bump().catch(report);
        throw error;
      }
      if (!writes.made) return result;
      try {
        await bump();
      } catch (error) {
        await unmoved?.();
        throw error;
      }
      return result;
    },
  };
}
