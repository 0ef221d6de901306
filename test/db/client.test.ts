import { beforeAll, describe, expect, it } from 'vitest';
import {
  batchPut,
  ConditionFailed,
  deleteItem,
  getItem,
  mapLimit,
  putItem,
  queryAll,
  queryAllWire,
  queryCount,
  queryPage,
  tableName,
  Throttled,
  transactWrite,
  updateItem,
  WriteConflict,
  batchGet,
} from '../../shared/db/client.js';
import { useTestTables } from '../support/dynamo.js';
import { requestsOf, type DynamoProxy } from '../support/dynamo-proxy.js';

let proxy: DynamoProxy;
beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
});

describe('document client wrapper on DynamoDB Local', () => {
  it('puts, gets, updates and deletes an item', async () => {
    await putItem('issues', { pk: 'ISSUE#1', sk: 'ISSUE', name: 'Disk full', count: 1 });
    expect(await getItem('issues', { pk: 'ISSUE#1', sk: 'ISSUE' })).toEqual({ pk: 'ISSUE#1', sk: 'ISSUE', name: 'Disk full', count: 1 });
    const updated = await updateItem(
      'issues',
      { pk: 'ISSUE#1', sk: 'ISSUE' },
      {
        UpdateExpression: 'SET #c = #c + :one',
        ExpressionAttributeNames: { '#c': 'count' },
        ExpressionAttributeValues: { ':one': 1 },
      },
    );
    expect(updated?.count).toBe(2);
    await deleteItem('issues', { pk: 'ISSUE#1', sk: 'ISSUE' });
    expect(await getItem('issues', { pk: 'ISSUE#1', sk: 'ISSUE' })).toBeUndefined();
  });

  it('turns a failed condition into ConditionFailed and leaves the item unchanged', async () => {
    await putItem('locks', { pk: 'LOCK#patrol', sk: 'LOCK', owner: 'a' }, { ConditionExpression: 'attribute_not_exists(pk)' });
    await expect(putItem('locks', { pk: 'LOCK#patrol', sk: 'LOCK', owner: 'b' }, { ConditionExpression: 'attribute_not_exists(pk)' })).rejects.toBeInstanceOf(
      ConditionFailed,
    );
    await expect(
      deleteItem(
        'locks',
        { pk: 'LOCK#patrol', sk: 'LOCK' },
        { ConditionExpression: '#owner = :me', ExpressionAttributeNames: { '#owner': 'owner' }, ExpressionAttributeValues: { ':me': 'b' } },
      ),
    ).rejects.toBeInstanceOf(ConditionFailed);
    expect((await getItem('locks', { pk: 'LOCK#patrol', sk: 'LOCK' }))?.owner).toBe('a');
  });

  it('batch-writes more than 25 items and pages through them', async () => {
    const items = Array.from({ length: 60 }, (_, i) => ({ pk: 'CLUSTER#c1', sk: `DAY#${String(i).padStart(3, '0')}`, v: i }));
    await batchPut('metrics', items);
    const query = { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'CLUSTER#c1' }, Limit: 7 };
    const first = await queryPage('metrics', query);
    expect(first.items).toHaveLength(7);
    expect(first.next).toBeDefined();
    const all = await queryAll<{ v: number }>('metrics', query);
    expect(all.map((i) => i.v)).toEqual(items.map((i) => i.v));
    expect(await queryAll('metrics', query, 10)).toHaveLength(10);
  });

  it('a query read up to a limit asks DynamoDB for no more than it misses (a page is otherwise up to 1 MB)', async () => {
    const items = Array.from({ length: 60 }, (_, i) => ({ pk: 'CLUSTER#c2', sk: `DAY#${String(i).padStart(3, '0')}`, v: i }));
    await batchPut('metrics', items);
    const query = { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'CLUSTER#c2' } };
    const { result, requests } = await requestsOf(
      proxy,
      () => queryAll<{ v: number }>('metrics', query, 20),
      (r) => r.operation === 'Query',
    );
    expect(result.map((i) => i.v)).toEqual(items.slice(0, 20).map((i) => i.v));
    expect(requests.map((r) => r.input.Limit)).toEqual([20]);
    // DynamoDB counts a Limit before the filter: a filtered read asks for whole pages, or it would go
    // an item per request once most are filtered out.
    const filtered = await requestsOf(
      proxy,
      () => queryAll<{ v: number }>('metrics', { ...query, FilterExpression: 'v >= :ten', ExpressionAttributeValues: { ':pk': 'CLUSTER#c2', ':ten': 10 } }, 20),
      (r) => r.operation === 'Query',
    );
    expect(filtered.result.map((i) => i.v)).toEqual(items.slice(10, 30).map((i) => i.v));
    expect(filtered.requests.map((r) => r.input.Limit)).toEqual([undefined]);
    expect(await queryAll('metrics', query, 0)).toEqual([]);
  });

  it('counts what a query matches page by page, after its filter, with no item sent back (queryCount)', async () => {
    const items = Array.from({ length: 60 }, (_, i) => ({ pk: 'COUNT#c1', sk: `DAY#${String(i).padStart(3, '0')}`, v: i, text: 'x'.repeat(200) }));
    await batchPut('metrics', items);
    const query = { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'COUNT#c1' }, ConsistentRead: true };
    // Limit 7: nine pages, each counted.
    const paged = await requestsOf(
      proxy,
      () => queryCount('metrics', { ...query, Limit: 7 }),
      (r) => r.operation === 'Query',
    );
    expect(paged.result).toBe(60);
    expect(paged.requests).toHaveLength(9);
    expect(paged.requests.every((r) => r.input.Select === 'COUNT')).toBe(true);
    const filtered = { ...query, FilterExpression: 'v >= :ten', ExpressionAttributeValues: { ':pk': 'COUNT#c1', ':ten': 10 } };
    expect(await queryCount('metrics', filtered)).toBe(50);
    expect(await queryCount('metrics', { ...query, ExpressionAttributeValues: { ':pk': 'COUNT#none' } })).toBe(0);
  });

  it("reads every page of a query as DynamoDB sent it (queryAllWire), and still throws the SDK's typed errors", async () => {
    const pk = 'WIRE#1';
    const items = Array.from({ length: 23 }, (_, i) => ({
      pk,
      sk: `S#${String(i).padStart(3, '0')}`,
      cell: Uint8Array.from({ length: 5 + i }, (_, b) => (b * 37 + i) % 256),
      v: i * 1.5,
      name: `é ${i} "quoted"`,
    }));
    await batchPut('metrics', items);
    const query = {
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': pk },
      ProjectionExpression: 'sk, cell, v, #n',
      ExpressionAttributeNames: { '#n': 'name' },
    };
    // Limit 4: six pages, each next key handed back as the wire gave it.
    const wire = await queryAllWire('metrics', { ...query, Limit: 4, ConsistentRead: true });
    expect(wire).toEqual(
      items.map((item) => ({ sk: { S: item.sk }, cell: { B: Buffer.from(item.cell).toString('base64') }, v: { N: String(item.v) }, name: { S: item.name } })),
    );
    expect(await queryAllWire('metrics', { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'WIRE#none' } })).toEqual([]);
    // An error answer goes through the SDK's own deserializer: its exception, by name.
    await expect(queryAllWire('metrics', { KeyConditionExpression: 'nokey = :pk', ExpressionAttributeValues: { ':pk': pk } })).rejects.toMatchObject({
      name: 'ValidationException',
    });
  });

  it('a transaction DynamoDB committed whose answer was lost is retried as done: applied once, not failed on its own condition', async () => {
    const key = { pk: 'TX#lost', sk: 'ITEM' };
    let lost = 0;
    const stop = proxy.watch(({ operation }) => (operation === 'TransactWriteItems' && lost++ === 0 ? 'lose-answer' : undefined));
    try {
      await transactWrite([
        { Put: { TableName: tableName('issues'), Item: { ...key, n: 1 }, ConditionExpression: 'attribute_not_exists(pk)' } },
        {
          Update: {
            TableName: tableName('issues'),
            Key: { pk: 'TX#lost', sk: 'COUNTER' },
            UpdateExpression: 'ADD n :one',
            ExpressionAttributeValues: { ':one': 1 },
          },
        },
      ]);
    } finally {
      stop();
    }
    expect(lost).toBe(2); // the first answer lost, the retry answered
    expect(await getItem('issues', key)).toMatchObject({ n: 1 });
    expect(await getItem('issues', { pk: 'TX#lost', sk: 'COUNTER' })).toMatchObject({ n: 1 });
  });

  it('writes a transaction all or nothing', async () => {
    await putItem('rules', { pk: 'RULESET#health', sk: 'CURRENT', version: 1 });
    const attempt = (expected: number) =>
      transactWrite([
        {
          Update: {
            TableName: tableName('rules'),
            Key: { pk: 'RULESET#health', sk: 'CURRENT' },
            UpdateExpression: 'SET version = :next',
            ConditionExpression: 'version = :expected',
            ExpressionAttributeValues: { ':expected': expected, ':next': expected + 1 },
          },
        },
        { Put: { TableName: tableName('rules'), Item: { pk: 'CHANGE#1', sk: 'CHANGE', status: 'approved' } } },
      ]);
    await expect(attempt(5)).rejects.toBeInstanceOf(ConditionFailed);
    expect(await getItem('rules', { pk: 'CHANGE#1', sk: 'CHANGE' })).toBeUndefined();
    expect((await getItem('rules', { pk: 'RULESET#health', sk: 'CURRENT' }))?.version).toBe(1);
    await attempt(1);
    expect((await getItem('rules', { pk: 'CHANGE#1', sk: 'CHANGE' }))?.status).toBe('approved');
    expect((await getItem('rules', { pk: 'RULESET#health', sk: 'CURRENT' }))?.version).toBe(2);
  });
});

describe('mapLimit', () => {
  const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('answers in input order with at most `limit` in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const results = await mapLimit([5, 1, 4, 2, 3], 2, async (ms, index) => {
      most = Math.max(most, ++inFlight);
      await tick(ms);
      inFlight--;
      return `${index}:${ms}`;
    });
    expect(results).toEqual(['0:5', '1:1', '2:4', '3:2', '4:3']);
    expect(most).toBe(2);
  });

  it('after a failure starts nothing more, and throws it only once every call in flight has ended', async () => {
    const started: number[] = [];
    const ended: number[] = [];
    const failure = new Error('item 1 failed');
    const calls = mapLimit(
      Array.from({ length: 20 }, (_, i) => i),
      4,
      async (i) => {
        started.push(i);
        if (i === 1) {
          await tick(1);
          throw failure;
        }
        await tick(i === 2 ? 30 : 5);
        ended.push(i);
        return i;
      },
    );
    await expect(calls).rejects.toBe(failure);
    // Item 2 was in flight when item 1 failed: it ended before the failure was thrown.
    expect(ended).toContain(2);
    const settled = [...started];
    await tick(50);
    expect(started).toEqual(settled);
    expect(started.length).toBeLessThan(20);
    expect(ended.length).toBe(started.length - 1);
  });
});

describe('a single-item write that meets a transaction holding its item', () => {
  // DynamoDB's answer to such a write: refused, unapplied.
  const conflict = { type: 'TransactionConflictException', message: 'Transaction is ongoing for the item' };

  it('is retried until the transaction is gone, and applies once', async () => {
    await putItem('issues', { pk: 'ISSUE#tc', sk: 'ISSUE', count: 0 });
    let refused = 0;
    const stop = proxy.watch(({ operation, input }) =>
      operation === 'UpdateItem' && JSON.stringify(input.Key).includes('ISSUE#tc') && refused++ < 2 ? conflict : undefined,
    );
    try {
      const updated = await updateItem(
        'issues',
        { pk: 'ISSUE#tc', sk: 'ISSUE' },
        { UpdateExpression: 'ADD #c :one', ExpressionAttributeNames: { '#c': 'count' }, ExpressionAttributeValues: { ':one': 1 } },
      );
      expect(updated?.count).toBe(1);
    } finally {
      stop();
    }
    expect(refused).toBe(3); // two refused, the third let through
  });

  it('answers WriteConflict (409) when it keeps meeting one, and changes nothing', async () => {
    await putItem('issues', { pk: 'ISSUE#tc2', sk: 'ISSUE', count: 0 });
    const stop = proxy.watch(({ operation, input }) => (operation === 'PutItem' && JSON.stringify(input.Item).includes('ISSUE#tc2') ? conflict : undefined));
    try {
      await expect(putItem('issues', { pk: 'ISSUE#tc2', sk: 'ISSUE', count: 9 })).rejects.toBeInstanceOf(WriteConflict);
    } finally {
      stop();
    }
    expect((await getItem('issues', { pk: 'ISSUE#tc2', sk: 'ISSUE' }))?.count).toBe(0);
  });
});

describe('DynamoDB short of capacity (throttling)', () => {
  it('a batch write whose items stay unprocessed fails Throttled; once DynamoDB takes them, all are written', async () => {
    const items = Array.from({ length: 3 }, (_, i) => ({ pk: `ISSUE#unprocessed${i}`, sk: 'ISSUE', n: i }));
    // DynamoDB's answer when a table lacks the capacity for a batch: the requests handed back as UnprocessedItems.
    let handedBack = 0;
    const stop = proxy.watch(({ operation, input }) =>
      operation === 'BatchWriteItem' && ++handedBack ? { reply: { UnprocessedItems: input.RequestItems } } : undefined,
    );
    try {
      await expect(batchPut('issues', items)).rejects.toBeInstanceOf(Throttled);
    } finally {
      stop();
    }
    expect(handedBack).toBe(9); // the first request and 8 retries
    expect(
      await batchGet(
        'issues',
        items.map(({ pk, sk }) => ({ pk, sk })),
      ),
    ).toEqual([]);

    let once = 0;
    const stopOnce = proxy.watch(({ operation, input }) =>
      operation === 'BatchWriteItem' && once++ === 0 ? { reply: { UnprocessedItems: input.RequestItems } } : undefined,
    );
    try {
      await batchPut('issues', items);
    } finally {
      stopOnce();
    }
    expect(once).toBe(2);
    expect(
      (
        await batchGet<{ n: number }>(
          'issues',
          items.map(({ pk, sk }) => ({ pk, sk })),
        )
      )
        .map((i) => i.n)
        .sort(),
    ).toEqual([0, 1, 2]);
  });

  it('a batch read whose keys stay unprocessed fails Throttled rather than answer part of them', async () => {
    await putItem('issues', { pk: 'ISSUE#unread', sk: 'ISSUE' });
    const stop = proxy.watch(({ operation, input }) =>
      operation === 'BatchGetItem'
        ? {
            reply: {
              Responses: {},
              UnprocessedKeys: Object.fromEntries(Object.entries(input.RequestItems).map(([t, r]: [string, any]) => [t, { Keys: r.Keys }])),
            },
          }
        : undefined,
    );
    try {
      await expect(batchGet('issues', [{ pk: 'ISSUE#unread', sk: 'ISSUE' }])).rejects.toBeInstanceOf(Throttled);
    } finally {
      stop();
    }
  });

  it('a transaction cancelled for capacity and conflict on every attempt fails Throttled, unapplied; for a validation error at once', async () => {
    const cancelled = (codes: string[]) => ({
      type: 'TransactionCanceledException',
      message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${codes.join(', ')}]`,
      fields: { CancellationReasons: codes.map((Code) => ({ Code })) },
    });
    const put = (pk: string) => [{ Put: { TableName: tableName('issues'), Item: { pk, sk: 'ISSUE' } } }];
    for (const [codes, expected, attempts] of [
      [['TransactionConflict', 'ProvisionedThroughputExceeded'], Throttled, 5],
      [['ValidationError', 'ThrottlingError'], undefined, 1],
    ] as const) {
      let sent = 0;
      const stop = proxy.watch(({ operation }) => (operation === 'TransactWriteItems' && ++sent ? cancelled([...codes]) : undefined));
      try {
        const failure = await transactWrite(put(`ISSUE#cancelled-${codes[0]}`)).catch((e: unknown) => e);
        if (expected) expect(failure).toBeInstanceOf(expected);
        else expect(failure).toMatchObject({ name: 'TransactionCanceledException' });
      } finally {
        stop();
      }
      expect(sent).toBe(attempts);
      expect(await getItem('issues', { pk: `ISSUE#cancelled-${codes[0]}`, sk: 'ISSUE' })).toBeUndefined();
    }
  });
});
