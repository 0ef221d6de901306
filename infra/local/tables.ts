// Creates the service's tables (from the one definition in shared/db/tables.ts)
// on a DynamoDB-API endpoint: used by `npm start` and by the tests, which give
// each suite its own table prefix. A table that exists gets the indexes declared
// since it was made (a DATA_DIR kept across a `git pull` that added one: its
// queries failed "index not found"); DynamoDB fills a new index from the items.
// It gets TTL too where the definition has gained it, as the stack's tables do.
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  ListTablesCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  type DynamoDBClient,
  type GlobalSecondaryIndex,
} from '@aws-sdk/client-dynamodb';
import { type IndexDefinition, physicalTableName, TABLES, TABLE_NAMES } from '../../shared/db/tables.js';

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

/** A declared index as DynamoDB takes it, creating a table or adding to one. */
const globalIndex = (index: IndexDefinition): GlobalSecondaryIndex => ({
  IndexName: index.name,
  KeySchema: [
    { AttributeName: index.partitionKey, KeyType: 'HASH' },
    { AttributeName: index.sortKey, KeyType: 'RANGE' },
  ],
  Projection: index.include ? { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.include] } : { ProjectionType: 'ALL' },
});

/** Returns the physical names of the tables it created. */
export async function ensureTables(client: DynamoDBClient, prefix: string): Promise<string[]> {
  const existing = await existingTables(client);
  const created: string[] = [];
  for (const table of TABLE_NAMES) {
    const name = physicalTableName(table, prefix);
    const def = TABLES[table];
    if (existing.has(name)) {
      await addMissingIndexes(client, name, def.indexes);
      if (def.ttl) await turnTtlOn(client, name, true);
      continue;
    }
    const indexes = def.indexes.map(globalIndex);
    // Two indexes may share their keys (another projection of the same order).
    const indexAttributes = [...new Set(def.indexes.flatMap((index) => [index.partitionKey, index.sortKey]))];
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
    if (def.ttl) await turnTtlOn(client, name, false);
    created.push(name);
  }
  return created;
}

/** TTL on the `ttl` attribute; on a table kept from before, only when it is not on already (turning it on twice is refused). */
async function turnTtlOn(client: DynamoDBClient, name: string, kept: boolean): Promise<void> {
  if (kept) {
    const { TimeToLiveDescription } = await client.send(new DescribeTimeToLiveCommand({ TableName: name }));
    if (TimeToLiveDescription?.TimeToLiveStatus === 'ENABLED' || TimeToLiveDescription?.TimeToLiveStatus === 'ENABLING') return;
  }
  await client.send(new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true } }));
}

/** Creates the declared indexes an existing table lacks, one at a time (DynamoDB takes one index creation per update). */
async function addMissingIndexes(client: DynamoDBClient, name: string, declared: readonly IndexDefinition[]): Promise<void> {
  if (!declared.length) return;
  const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
  const present = new Set((Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName));
  for (const index of declared) {
    if (present.has(index.name)) continue;
    await client.send(
      new UpdateTableCommand({
        TableName: name,
        AttributeDefinitions: [index.partitionKey, index.sortKey].map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
        GlobalSecondaryIndexUpdates: [{ Create: globalIndex(index) }],
      }),
    );
    // Until it is ACTIVE it answers no query, and the table takes no other index update.
    for (let waited = 0; ; waited += 100) {
      const { Table: now } = await client.send(new DescribeTableCommand({ TableName: name }));
      if (now?.GlobalSecondaryIndexes?.find((i) => i.IndexName === index.name)?.IndexStatus === 'ACTIVE') break;
      if (waited > 120_000) throw new Error(`index ${index.name} of ${name} was not ready within 2 minutes`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
