// A function's declared tables, enforced on its DynamoDB requests as IAM enforces the grants
// derived from them (shared/db/access.ts): DynamoDB Local checks no IAM, so this is what makes
// an undeclared table fail in tests and `npm start` as it fails on AWS.
import { beforeAll, describe, expect, it } from 'vitest';
import { batchGet, getItem, putItem, queryAll, tableName, transactWrite } from '../../shared/db/client.js';
import { checkTableAccess, withTableAccess } from '../../shared/db/access.js';
import { useTestTables } from '../support/dynamo.js';

beforeAll(async () => {
  await useTestTables();
});

const key = { pk: 'ACCESS#test', sk: 'ITEM' };
const asGroup = <T>(work: () => Promise<T>) => withTableAccess('a-group', { users: 'read', locks: 'readwrite' }, work);
const denied = (access: string, table: string) => ({
  name: 'AccessDeniedException',
  message: `a-group declares no ${access} access to table ${table} (it would be an AccessDenied on AWS)`,
});

describe('declared table access', () => {
  it('lets a function read and write what it declares', async () => {
    await asGroup(async () => {
      await putItem('locks', { ...key, owner: 'x' });
      expect(await getItem('locks', key)).toMatchObject({ owner: 'x' });
      expect(await getItem('users', key)).toBeUndefined();
      expect(await queryAll('users', { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': key.pk } })).toEqual([]);
      // A condition on a table read, a write to one written.
      await transactWrite([
        { ConditionCheck: { TableName: tableName('users'), Key: key, ConditionExpression: 'attribute_not_exists(pk)' } },
        { Put: { TableName: tableName('locks'), Item: { ...key, owner: 'y' } } },
      ]);
    });
  });

  it('refuses a table it does not declare, and a write to one it only reads, before anything is sent', async () => {
    await expect(asGroup(() => getItem('audit', key))).rejects.toMatchObject(denied('read', 'audit'));
    await expect(asGroup(() => batchGet('audit', [key]))).rejects.toMatchObject(denied('read', 'audit'));
    await expect(asGroup(() => putItem('users', { ...key, name: 'n' }))).rejects.toMatchObject(denied('write', 'users'));
    await expect(
      asGroup(() =>
        transactWrite([{ Put: { TableName: tableName('locks'), Item: { ...key, owner: 'z' } } }, { Put: { TableName: tableName('audit'), Item: { ...key } } }]),
      ),
    ).rejects.toMatchObject(denied('write', 'audit'));
    // Nothing of the refused transaction was written.
    expect(await getItem('locks', key)).toMatchObject({ owner: 'y' });
    expect(await getItem('users', key)).toBeUndefined();
  });

  it('refuses an operation no function is granted (a Scan), even on a table it declares', () => {
    expect(() => withTableAccess('a-group', { users: 'readwrite' }, () => checkTableAccess('Scan', { TableName: tableName('users') }))).toThrow(
      expect.objectContaining({ name: 'AccessDeniedException', message: expect.stringContaining('a-group is granted no Scan on') }),
    );
  });

  it('checks nothing outside a function (tests, the local runtime setting up)', async () => {
    await putItem('audit', { ...key, at: 'now' });
    expect(await getItem('audit', key)).toMatchObject({ at: 'now' });
  });
});
