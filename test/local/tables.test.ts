// The local tables against DynamoDB Local: a table kept in a DATA_DIR from before an index was
// declared (a `git pull` that added one) gets it at the next start, filled from the items it holds,
// and TTL where the definition has it.
// On an emulator of its own, quiet as `npm start`'s is when it creates tables: DynamoDB Local
// finishes a new index only between requests, and the run's shared one never pauses.
import { randomBytes } from 'node:crypto';
import { CreateTableCommand, DescribeTableCommand, DescribeTimeToLiveCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { localClient, startDynamoDbLocal } from '../../infra/local/dynamodb-local.js';
import { ensureTables } from '../../infra/local/tables.js';
import { physicalTableName, TABLES } from '../../shared/db/tables.js';

describe('ensureTables', () => {
  it('adds the indexes a kept table lacks, and its items are found through them', { timeout: 120_000 }, async () => {
    const emulator = await startDynamoDbLocal();
    try {
      const client = localClient(emulator.endpoint);
      const prefix = `t${randomBytes(4).toString('hex')}-`;
      const name = physicalTableName('audit', prefix);
      const [index] = TABLES.audit.indexes;
      // The table as an older checkout made it: keys only, no index.
      await client.send(
        new CreateTableCommand({
          TableName: name,
          BillingMode: 'PAY_PER_REQUEST',
          KeySchema: [
            { AttributeName: 'pk', KeyType: 'HASH' },
            { AttributeName: 'sk', KeyType: 'RANGE' },
          ],
          AttributeDefinitions: ['pk', 'sk'].map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
        }),
      );
      await client.send(
        new PutItemCommand({
          TableName: name,
          Item: { pk: { S: 'AUDIT' }, sk: { S: 'a' }, [index!.partitionKey]: { S: 'BY-TIME' }, [index!.sortKey]: { S: '2026-12-01' } },
        }),
      );
      const created = await ensureTables(client, prefix);
      expect(created).not.toContain(name);
      const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
      expect(Table?.GlobalSecondaryIndexes?.map((i) => i.IndexName)).toEqual([index!.name]);
      const found = await client.send(
        new QueryCommand({
          TableName: name,
          IndexName: index!.name,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': index!.partitionKey },
          ExpressionAttributeValues: { ':pk': { S: 'BY-TIME' } },
        }),
      );
      expect(found.Items?.map((i) => i.sk?.S)).toEqual(['a']);
      // TTL too, which the older table was made without (audit's definition has it).
      expect(TABLES.audit.ttl).toBe(true);
      const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: name }));
      expect(ttl.TimeToLiveDescription).toMatchObject({ TimeToLiveStatus: 'ENABLED', AttributeName: 'ttl' });
      // A second start finds nothing to add (TTL already on is not turned on again, which DynamoDB refuses).
      await ensureTables(client, prefix);
      client.destroy();
    } finally {
      await emulator.stop();
    }
  });
});
