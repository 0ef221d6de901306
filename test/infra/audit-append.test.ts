// The audit table is append-only: the route groups that write it declare `append` (PutItem only)
// or, settings, which also lists it, `readappend`; the stack grants exactly that (stack.test.ts),
// and shared/db/access.ts enforces the same in-process, where DynamoDB Local checks no IAM.
// Here through the audit repository and the DynamoDB wrapper, against DynamoDB Local.
import { beforeAll, describe, expect, it } from 'vitest';
import { auditAction, listAudit, writeAudit } from '../../shared/db/audit.js';
import { batchPut, deleteItem, getItem, queryAll, tableName, transactWrite, updateItem } from '../../shared/db/client.js';
import { withTableAccess } from '../../shared/db/access.js';
import { ROUTE_GROUPS } from '../../shared/routes/all-groups.js';
import { WORKERS } from '../../shared/workers.js';
import { useTestTables } from '../support/dynamo.js';

beforeAll(async () => {
  await useTestTables();
});

const entry = { actor: 'alice', role: 'admin', action: 'login' } as const;
const appender = <T>(work: () => Promise<T>) => withTableAccess('a-group', { tables: { audit: 'append', scores: 'readwrite' } }, work);
const reader = <T>(work: () => Promise<T>) => withTableAccess('settings-like', { tables: { audit: 'readappend' } }, work);
const refused = (access: string, action: string) => ({
  name: 'AccessDeniedException',
  message: `${access === 'append' ? 'a-group' : 'settings-like'} declares ${access} access to table audit, which grants no ${action} (it would be an AccessDenied on AWS)`,
});

describe('append-only audit table', () => {
  it('lets an appending group put entries, alone and in the transaction of the change they record', async () => {
    const written = await appender(() => writeAudit({ ...entry, target: 'one' }));
    const lock = { pk: 'AUDIT-APPEND#test', sk: 'CHANGE' };
    await appender(() => transactWrite([{ Put: { TableName: tableName('scores'), Item: { ...lock, owner: 'x' } } }, auditAction({ ...entry, target: 'two' })]));
    const targets = (await listAudit()).map((e) => e.target);
    expect(targets).toEqual(expect.arrayContaining(['one', 'two']));
    expect(await getItem('scores', lock)).toMatchObject({ owner: 'x' });
    expect(written.actor).toBe('alice');
  });

  it('refuses it any change to an entry, a batch write and any read, before anything is sent', async () => {
    const [stored] = await queryAll<{ pk: string; sk: string; target: string }>('audit', {
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': 'AUDIT' },
    });
    const key = { pk: stored!.pk, sk: stored!.sk };
    await expect(
      appender(() => updateItem('audit', key, { UpdateExpression: 'SET target = :t', ExpressionAttributeValues: { ':t': 'forged' } })),
    ).rejects.toMatchObject(refused('append', 'UpdateItem'));
    await expect(appender(() => deleteItem('audit', key))).rejects.toMatchObject(refused('append', 'DeleteItem'));
    await expect(appender(() => batchPut('audit', [{ ...key, target: 'forged' }]))).rejects.toMatchObject(refused('append', 'BatchWriteItem'));
    await expect(appender(() => transactWrite([{ Delete: { TableName: tableName('audit'), Key: key } }]))).rejects.toMatchObject(
      refused('append', 'DeleteItem'),
    );
    await expect(appender(() => listAudit())).rejects.toMatchObject(refused('append', 'Query'));
    await expect(appender(() => getItem('audit', key))).rejects.toMatchObject(refused('append', 'GetItem'));
    // The entry is as it was written.
    expect(await getItem('audit', key)).toMatchObject({ target: stored!.target });
  });

  it('lets a group that declares readappend list the log and append to it, and change nothing in it', async () => {
    await reader(() => writeAudit({ ...entry, target: 'three' }));
    expect((await reader(() => listAudit())).map((e) => e.target)).toContain('three');
    const [newest] = await listAudit();
    const key = { pk: 'AUDIT', sk: `${newest!.at}#${newest!.id}` };
    await expect(
      reader(() => updateItem('audit', key, { UpdateExpression: 'SET target = :t', ExpressionAttributeValues: { ':t': 'x' } })),
    ).rejects.toMatchObject(refused('readappend', 'UpdateItem'));
    await expect(reader(() => deleteItem('audit', key))).rejects.toMatchObject(refused('readappend', 'DeleteItem'));
  });

  it('is declared append-only by every function that touches it: settings reads it, no worker touches it', () => {
    const declared = Object.fromEntries(ROUTE_GROUPS.flatMap((g) => (g.tables.audit ? [[g.name, g.tables.audit]] : [])));
    expect(declared).toEqual({ auth: 'append', 'ai-issues': 'append', issues: 'append', patrol: 'append', settings: 'readappend' });
    expect(Object.values(WORKERS).filter((w) => 'audit' in w.tables)).toEqual([]);
  });
});
