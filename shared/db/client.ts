// A typed wrapper over the DynamoDB document client: table names resolved from
// the logical names, pagination and batch retries done once, and conditional
// failures surfaced as a typed error. Repositories build on this; nothing else
// talks to DynamoDB directly.
//
// Locally and in tests the SDK reaches DynamoDB Local through the standard
// AWS_ENDPOINT_URL_DYNAMODB variable, so this module never knows where it runs.
import {
  DynamoDBClient,
  ConditionalCheckFailedException,
  QueryCommand as WireQueryCommand,
  TransactionCanceledException,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DeleteCommandInput,
  type PutCommandInput,
  type QueryCommandInput,
  type TransactWriteCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { checkTableAccess } from './access.js';
import { isMap } from './items.js';
import { physicalTableName, type TableName } from './tables.js';

export type Item = Record<string, unknown>;
export interface Key {
  pk: string;
  sk: string;
}

let lowLevelClient: DynamoDBClient | undefined;
let documentClient: DynamoDBDocumentClient | undefined;

/**
 * Binary attributes (rollup cells, packs, snapshot slices) decoded by Node alone. The SDK's
 * default decoder first runs a regular expression over every character, ≈ 60 ms of a
 * 10,000-cluster refresh's 15 MB of base64, which DynamoDB itself encoded. A string Node
 * cannot decode whole (a character outside base64, padding in the wrong place) is still
 * refused: Node skips what it cannot decode, so the length it gives differs. It accepts
 * exactly what the SDK's decoder accepts (test/db/base64.test.ts).
 */
export function base64Decoder(input: string): Uint8Array {
  const bytes = Buffer.from(input, 'base64');
  const padding = input.endsWith('==') ? 2 : input.endsWith('=') ? 1 : 0;
  // Node also takes base64url's - and _, which base64 has not.
  if (input.length % 4 !== 0 || bytes.length !== (input.length / 4) * 3 - padding || input.includes('-') || input.includes('_'))
    throw new TypeError('Invalid base64 string.');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}

/** One client per container, created on first use (the document client wraps it and shares its middleware). */
const lowLevel = (): DynamoDBClient => {
  if (!lowLevelClient) {
    lowLevelClient = new DynamoDBClient({ maxAttempts: 4, base64Decoder });
    // The running function's declared tables, checked before anything is sent (access.ts).
    lowLevelClient.middlewareStack.add(
      (next, context) => (args) => {
        checkTableAccess(context.commandName ?? '', args.input as Record<string, unknown>);
        return next(args);
      },
      { step: 'initialize', name: 'fleetHealthTableAccess', priority: 'high' },
    );
  }
  return lowLevelClient;
};

export function db(): DynamoDBDocumentClient {
  documentClient ??= DynamoDBDocumentClient.from(lowLevel(), {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  return documentClient;
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

async function conditional<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw new ConditionFailed([0]);
    if (error instanceof TransactionCanceledException) {
      const failed = (error.CancellationReasons ?? []).flatMap((r, i) => (r.Code === 'ConditionalCheckFailed' ? [i] : []));
      if (failed.length) throw new ConditionFailed(failed);
    }
    throw error;
  }
}

export async function getItem<T extends Item>(table: TableName, key: Key, consistent = false): Promise<T | undefined> {
  const out = await db().send(new GetCommand({ TableName: physicalTableName(table), Key: key, ConsistentRead: consistent }));
  return out.Item as T | undefined;
}

type PutOptions = Omit<PutCommandInput, 'TableName' | 'Item'>;

/** Put an item; throws ConditionFailed when `ConditionExpression` does not hold. */
export async function putItem(table: TableName, item: Key & Item, options: PutOptions = {}): Promise<void> {
  await conditional(() => db().send(new PutCommand({ TableName: physicalTableName(table), Item: item, ...options })));
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
  const out = await conditional(() => db().send(new UpdateCommand({ TableName: physicalTableName(table), Key: key, ReturnValues: 'ALL_NEW', ...options })));
  return out.Attributes as T | undefined;
}

type DeleteOptions = Omit<DeleteCommandInput, 'TableName' | 'Key'>;

export async function deleteItem(table: TableName, key: Key, options: DeleteOptions = {}): Promise<void> {
  await conditional(() => db().send(new DeleteCommand({ TableName: physicalTableName(table), Key: key, ...options })));
}

type QueryOptions = Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>;

export interface Page<T> {
  items: T[];
  /** Opaque cursor for the next page, absent on the last one. */
  next?: Record<string, unknown>;
}

export async function queryPage<T extends Item>(table: TableName, options: QueryOptions, start?: Record<string, unknown>): Promise<Page<T>> {
  const out = await db().send(new QueryCommand({ TableName: physicalTableName(table), ...options, ExclusiveStartKey: start }));
  return { items: (out.Items ?? []) as T[], next: out.LastEvaluatedKey };
}

/** Follow LastEvaluatedKey until done or `limit` items are collected. */
export async function queryAll<T extends Item>(table: TableName, options: QueryOptions, limit = Infinity): Promise<T[]> {
  const items: T[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await queryPage<T>(table, options, start);
    items.push(...page.items);
    start = page.next;
  } while (start && items.length < limit);
  return items.length > limit ? items.slice(0, limit) : items;
}

/** An attribute as DynamoDB's JSON wire format holds it: one type key, binary as base64 text. */
export interface WireAttribute {
  S?: string;
  N?: string;
  B?: string;
  BOOL?: boolean;
  NULL?: boolean;
  L?: WireAttribute[];
  M?: Record<string, WireAttribute>;
  SS?: string[];
  NS?: string[];
  BS?: string[];
}
export type WireItem = Record<string, WireAttribute>;

/**
 * `queryAll` for a read of thousands of items whose few attributes the caller decodes
 * itself (the refresh's 10,000 rollup cells of today): every item as DynamoDB sent it,
 * each page's body parsed once. The SDK still signs, sends, retries and turns an error
 * into its typed exception; only a 200's body skips its deserializer, which walks every
 * attribute through the operation's schema, and the document client's second pass over
 * every value (shared/db/README.md, "Wire reads").
 */
export async function queryAllWire(table: TableName, options: QueryOptions): Promise<WireItem[]> {
  const { ExpressionAttributeValues: values, ...rest } = options;
  const items: WireItem[] = [];
  let start: WireItem | undefined;
  do {
    const page = await wirePage(
      new WireQueryCommand({
        TableName: physicalTableName(table),
        ...rest,
        ...(values ? { ExpressionAttributeValues: marshall(values, { removeUndefinedValues: true }) } : {}),
        // A key as the wire gave it: the SDK's DynamoDB serializer writes a binary key's base64 text as it is.
        ExclusiveStartKey: start as Record<string, AttributeValue> | undefined,
      }),
    );
    for (const item of page.items) items.push(item);
    start = page.next;
  } while (start);
  return items;
}

/** One Query page through the SDK, its 200 body read here (the SDK's deserializer gets an empty output instead). */
async function wirePage(command: WireQueryCommand): Promise<{ items: WireItem[]; next?: WireItem }> {
  let page: { items: WireItem[]; next?: WireItem } | undefined;
  command.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      const response = result.response as { statusCode?: number; body?: unknown };
      if (response.statusCode === 200) {
        page = wireQueryOutput(await bodyText(response.body));
        response.body = new Uint8Array([0x7b, 0x7d]); // "{}"
      }
      return result;
    },
    // Innermost of the deserialize step: it sees the HTTP response before the SDK's deserializer.
    { step: 'deserialize', priority: 'low', name: 'fleetHealthWirePage' },
  );
  await lowLevel().send(command);
  if (!page) throw new Error(`DynamoDB Query on ${String(command.input.TableName)}: answered without a body`);
  return page;
}

async function bodyText(body: unknown): Promise<string> {
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  if (body && typeof body === 'object' && Symbol.asyncIterator in body) {
    const chunks: Buffer[] = [];
    for await (const chunk of body as AsyncIterable<Uint8Array | string>)
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    return Buffer.concat(chunks).toString('utf8');
  }
  throw new TypeError('DynamoDB Query: a response body that is neither bytes nor a stream');
}

/** A Query output's items and next key, checked to be objects (their attributes are the caller's to check). */
function wireQueryOutput(text: string): { items: WireItem[]; next?: WireItem } {
  const output: unknown = JSON.parse(text);
  const items = isMap(output) ? (output.Items ?? []) : undefined;
  const next = isMap(output) ? output.LastEvaluatedKey : undefined;
  if (!Array.isArray(items) || !items.every(isMap) || (next !== undefined && !isMap(next)))
    throw new TypeError('DynamoDB Query: an output without a list of items');
  return { items: items as WireItem[], ...(next ? { next: next as WireItem } : {}) };
}

const BATCH_SIZE = 25;
const MAX_BATCH_RETRIES = 8;

/** Write many items in batches of 25, retrying UnprocessedItems with backoff. Not atomic. */
export async function batchPut(table: TableName, items: (Key & Item)[]): Promise<void> {
  const name = physicalTableName(table);
  for (let i = 0; i < items.length; i += BATCH_SIZE) {
    let requests = items.slice(i, i + BATCH_SIZE).map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; requests.length > 0; attempt++) {
      if (attempt > MAX_BATCH_RETRIES) throw new Error(`batchPut: ${requests.length} items still unprocessed in ${name}`);
      if (attempt > 0) await sleep(Math.min(1000, 25 * 2 ** attempt));
      const out = await db().send(new BatchWriteCommand({ RequestItems: { [name]: requests } }));
      requests = (out.UnprocessedItems?.[name] ?? []) as typeof requests;
    }
  }
}

const BATCH_GET_SIZE = 100;

/** Read many items by key (any order), 100 per request, retrying UnprocessedKeys. Missing keys are skipped. */
export async function batchGet<T extends Item>(table: TableName, keys: Key[], consistent = false): Promise<T[]> {
  const name = physicalTableName(table);
  const found: T[] = [];
  for (let i = 0; i < keys.length; i += BATCH_GET_SIZE) {
    let pending: Record<string, unknown>[] = keys.slice(i, i + BATCH_GET_SIZE).map((k) => ({ pk: k.pk, sk: k.sk }));
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > MAX_BATCH_RETRIES) throw new Error(`batchGet: ${pending.length} keys still unprocessed in ${name}`);
      if (attempt > 0) await sleep(Math.min(1000, 25 * 2 ** attempt));
      const out = await db().send(new BatchGetCommand({ RequestItems: { [name]: { Keys: pending, ConsistentRead: consistent } } }));
      found.push(...((out.Responses?.[name] ?? []) as T[]));
      pending = out.UnprocessedKeys?.[name]?.Keys ?? [];
    }
  }
  return found;
}

/** Runs `work` over `items` with at most `limit` in flight; results in input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  });
  await Promise.all(runners);
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

/** Attempts of a transaction that lost to a concurrent one on the same items. */
const TRANSACTION_ATTEMPTS = 5;

/**
 * All-or-nothing write of up to 100 actions; ConditionFailed (with the failed indexes) when a condition
 * does not hold. A transaction cancelled only because another one held the
 * same items (TransactionConflict) is retried with backoff: its conditions are
 * evaluated afresh, so the retry either applies or fails on its conditions.
 * WriteConflict when it still conflicts after TRANSACTION_ATTEMPTS.
 */
export async function transactWrite(items: TransactItem[], clientRequestToken?: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await conditional(() => db().send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: clientRequestToken })));
      return;
    } catch (error) {
      const conflict = error instanceof TransactionCanceledException && (error.CancellationReasons ?? []).some((r) => r.Code === 'TransactionConflict');
      if (!conflict) throw error;
      if (attempt >= TRANSACTION_ATTEMPTS) throw new WriteConflict();
      await sleep(backoffMs(attempt));
    }
  }
}

/** Table name for building TransactItems by hand. */
export const tableName = physicalTableName;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Attempts of a marker move that meets a transaction holding the marker. */
const MARKER_ATTEMPTS = 5;

/**
 * A cache generation marker (`pk CACHE, sk GENERATION` in `table`): read
 * strongly consistent, so it has moved for every write acknowledged before;
 * moved by `ADD`, alone (`bump`) or as the last action of the transaction that
 * makes the change (`action`). A transaction holding the marker rejects a
 * lone move with TransactionConflictException, unapplied and not retried by
 * the SDK: `bump` retries it with backoff.
 */
export function generationMarker(table: TableName) {
  const key = { pk: 'CACHE', sk: 'GENERATION' };
  const move = { UpdateExpression: 'ADD generation :one', ExpressionAttributeValues: { ':one': 1 } };
  return {
    current: async (): Promise<number> => Number((await getItem(table, key, true))?.generation ?? 0),
    bump: (): Promise<number> =>
      retrying(
        async () => Number((await updateItem(table, key, move))?.generation),
        (error) => (error as Error).name === 'TransactionConflictException',
        MARKER_ATTEMPTS,
      ),
    action: (): TransactItem => ({ Update: { TableName: physicalTableName(table), Key: key, ...move } }),
  };
}
