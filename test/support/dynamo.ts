// Points this test file's process at the shared DynamoDB Local with a table
// prefix of its own, and creates the tables.
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { localClient } from '../../infra/local/dynamodb-local.js';
import { ensureTables } from '../../infra/local/tables.js';

export async function useTestTables(): Promise<{ endpoint: string; prefix: string }> {
  const endpoint = inject('dynamoEndpoint');
  const prefix = `t${randomBytes(4).toString('hex')}-`;
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: endpoint,
    AWS_REGION: 'local',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    TABLE_PREFIX: prefix,
  });
  const client = localClient(endpoint);
  await ensureTables(client, prefix);
  client.destroy();
  return { endpoint, prefix };
}
