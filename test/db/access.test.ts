// A function's declared tables, enforced on its DynamoDB requests as IAM enforces the grants
// derived from them (shared/db/access.ts): DynamoDB Local checks no IAM, so this is what makes
// an undeclared table fail in tests and `npm start` as it fails on AWS.
import { beforeAll, describe, expect, it } from 'vitest';
import { batchGet, deleteItem, getItem, putItem, queryAll, tableName, transactWrite } from '../../shared/db/client.js';
import { checkTableAccess, withTableAccess } from '../../shared/db/access.js';
import { useTestTables } from '../support/dynamo.js';

beforeAll(async () => {
  await useTestTables();
});

const key = { pk: 'ACCESS#test', sk: 'ITEM' };
/** A lease lock the group declares (`leases: ['patrol']`), where it writes. */
const lock = { pk: 'LOCK#patrol', sk: 'LOCK' };
const asGroup = <T>(work: () => Promise<T>) => withTableAccess('a-group', { tables: { users: 'read', locks: 'readwrite' }, leases: ['patrol'] }, work);
const denied = (access: string, table: string) => ({
  name: 'AccessDeniedException',
  message: `a-group declares no ${access} access to table ${table} (it would be an AccessDenied on AWS)`,
});

describe('declared table access', () => {
  it('lets a function read and write what it declares', async () => {
    await asGroup(async () => {
      await putItem('locks', { ...lock, owner: 'x' });
      expect(await getItem('locks', lock)).toMatchObject({ owner: 'x' });
      expect(await getItem('users', key)).toBeUndefined();
      expect(await queryAll('users', { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': key.pk } })).toEqual([]);
      // A condition on a table read, a write to one written.
      await transactWrite([
        { ConditionCheck: { TableName: tableName('users'), Key: key, ConditionExpression: 'attribute_not_exists(pk)' } },
        { Put: { TableName: tableName('locks'), Item: { ...lock, owner: 'y' } } },
      ]);
    });
  });

  it('refuses a table it does not declare, and a write to one it only reads, before anything is sent', async () => {
    await expect(asGroup(() => getItem('audit', key))).rejects.toMatchObject(denied('read', 'audit'));
    await expect(asGroup(() => batchGet('audit', [key]))).rejects.toMatchObject(denied('read', 'audit'));
    await expect(asGroup(() => putItem('users', { ...key, name: 'n' }))).rejects.toMatchObject(denied('write', 'users'));
    await expect(
      asGroup(() =>
        transactWrite([
          { Put: { TableName: tableName('locks'), Item: { ...lock, owner: 'z' } } },
          { Put: { TableName: tableName('audit'), Item: { ...key } } },
        ]),
      ),
    ).rejects.toMatchObject(denied('write', 'audit'));
    // Nothing of the refused transaction was written.
    expect(await getItem('locks', lock)).toMatchObject({ owner: 'y' });
    expect(await getItem('users', key)).toBeUndefined();
  });

  it('lets a function declaring locks reach only the lease locks it names, as IAM grants their partition keys alone', async () => {
    const leaseDenied = (owner: string, lockKey: string) => ({
      name: 'AccessDeniedException',
      message: expect.stringContaining(`${owner} declares no lease lock ${lockKey}`),
    });
    const puller = { pk: 'LOCK#metrics-puller', sk: 'LOCK' };
    await expect(asGroup(() => getItem('locks', puller))).rejects.toMatchObject(leaseDenied('a-group', 'LOCK#metrics-puller'));
    await expect(asGroup(() => putItem('locks', { ...puller, owner: 'x' }))).rejects.toMatchObject(leaseDenied('a-group', 'LOCK#metrics-puller'));
    await expect(asGroup(() => deleteItem('locks', { pk: 'LOCK#refresh:fleet', sk: 'LOCK' }))).rejects.toMatchObject(
      leaseDenied('a-group', 'LOCK#refresh:fleet'),
    );
    await expect(asGroup(() => batchGet('locks', [lock, puller]))).rejects.toMatchObject(leaseDenied('a-group', 'LOCK#metrics-puller'));
    await expect(
      asGroup(() =>
        transactWrite([
          { Put: { TableName: tableName('locks'), Item: { ...lock, owner: 'z' } } },
          { Put: { TableName: tableName('locks'), Item: { ...puller, owner: 'z' } } },
        ]),
      ),
    ).rejects.toMatchObject(leaseDenied('a-group', 'LOCK#metrics-puller'));
    expect(await getItem('locks', puller)).toBeUndefined();
    // A pattern's `*` takes the rest of the key, and nothing before it: every refresh claim, and no other lock.
    const refresher = <T>(work: () => Promise<T>) => withTableAccess('refresher', { tables: { locks: 'readwrite' }, leases: ['refresh'] }, work);
    for (const name of ['refresh:fleet', 'refresh:fleet,health,risk']) {
      await refresher(() => putItem('locks', { pk: `LOCK#${name}`, sk: 'LOCK', owner: 'r' }));
      expect(await refresher(() => getItem('locks', { pk: `LOCK#${name}`, sk: 'LOCK' }))).toMatchObject({ owner: 'r' });
    }
    await expect(refresher(() => getItem('locks', lock))).rejects.toMatchObject(leaseDenied('refresher', 'LOCK#patrol'));
    await expect(refresher(() => getItem('locks', { pk: 'LOCK#refresh', sk: 'LOCK' }))).rejects.toMatchObject(leaseDenied('refresher', 'LOCK#refresh'));
    // A key it cannot read is no lease: a request naming none, a batch with one, a query by another placeholder.
    await expect(asGroup(() => getItem('locks', { sk: 'LOCK' } as never))).rejects.toMatchObject(leaseDenied('a-group', 'undefined'));
    await expect(asGroup(() => batchGet('locks', [lock, { sk: 'LOCK' } as never]))).rejects.toMatchObject(leaseDenied('a-group', 'undefined'));
    await expect(
      asGroup(() => queryAll('locks', { KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': 'LOCK#metrics-puller' } })),
    ).rejects.toMatchObject(leaseDenied('a-group', 'LOCK#metrics-puller'));
    expect(await asGroup(() => queryAll('locks', { KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': 'LOCK#patrol' } }))).toHaveLength(1);
    // Declaring the table and no lease reaches no lock at all.
    const none = <T>(work: () => Promise<T>) => withTableAccess('no-leases', { tables: { locks: 'readwrite' } }, work);
    await expect(none(() => getItem('locks', lock))).rejects.toMatchObject(leaseDenied('no-leases', 'LOCK#patrol'));
  });

  it('refuses an operation no function is granted (a Scan), even on a table it declares', () => {
    expect(() => withTableAccess('a-group', { tables: { users: 'readwrite' } }, () => checkTableAccess('Scan', { TableName: tableName('users') }))).toThrow(
      expect.objectContaining({ name: 'AccessDeniedException', message: expect.stringContaining('a-group is granted no Scan on') }),
    );
  });

  it('checks nothing outside a function (tests, the local runtime setting up)', async () => {
    await putItem('audit', { ...key, at: 'now' });
    expect(await getItem('audit', key)).toMatchObject({ at: 'now' });
  });
});
