// Creates the service's tables (from the one definition in shared/db/tables.ts)
// on a DynamoDB-API endpoint, skipping those that exist: used by `npm start`
// and by the tests, which give each suite its own table prefix.
import { CreateTableCommand, ListTablesCommand, UpdateTimeToLiveCommand, type DynamoDBClient, type GlobalSecondaryIndex } from '@aws-sdk/client-dynamodb';
import { physicalTableName, TABLES, TABLE_NAMES } from '../../shared/db/tables.js';

async function existingTables(client: DynamoDBClient): Promise<Set<string>> {
  const names = new Set<string>();
  let start: string | undefined;
  do {
    const out = await client.send(new ListTablesCommand({ ExclusiveStartTableName: start }));
    for (const name of out.TableNames ?? []) names.add(name);
    start = out.LastEvaluatedTableName;
  } while (start);
  return names;
}

/** Returns the physical names of the tables it created. */
export async function ensureTables(client: DynamoDBClient, prefix: string): Promise<string[]> {
  const existing = await existingTables(client);
  const created: string[] = [];
  for (const table of TABLE_NAMES) {
    const name = physicalTableName(table, prefix);
    if (existing.has(name)) continue;
    const def = TABLES[table];
    const indexes: GlobalSecondaryIndex[] = def.indexes.map((index) => ({
      IndexName: index.name,
      KeySchema: [
        { AttributeName: index.partitionKey, KeyType: 'HASH' },
        { AttributeName: index.sortKey, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'ALL' },
    }));
    const indexAttributes = def.indexes.flatMap((index) => [index.partitionKey, index.sortKey]);
    await client.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        AttributeDefinitions: ['pk', 'sk', ...indexAttributes].map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
        GlobalSecondaryIndexes: indexes.length ? indexes : undefined,
      }),
    );
    if (def.ttl) {
      await client.send(new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true } }));
    }
    created.push(name);
  }
  return created;
}
