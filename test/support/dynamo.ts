// Points this test file's process at the shared DynamoDB Local with a table
// prefix of its own, and creates the tables. With `proxy`, the process reaches it
// through a proxy that lets the test watch, count or refuse requests on the wire.
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { localClient } from '../../infra/local/dynamodb-local.js';
import { ensureTables } from '../../infra/local/tables.js';
import { startDynamoProxy, type DynamoProxy } from './dynamo-proxy.js';

export async function useTestTables(): Promise<{ endpoint: string; prefix: string }>;
export async function useTestTables(options: { proxy: true }): Promise<{ endpoint: string; prefix: string; proxy: DynamoProxy }>;
export async function useTestTables(options: { proxy?: boolean } = {}): Promise<{ endpoint: string; prefix: string; proxy?: DynamoProxy }> {
  const endpoint = inject('dynamoEndpoint');
  const prefix = `t${randomBytes(4).toString('hex')}-`;
  const proxy = options.proxy ? await startDynamoProxy(endpoint) : undefined;
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: proxy?.endpoint ?? endpoint,
    AWS_REGION: 'local',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    TABLE_PREFIX: prefix,
  });
  const client = localClient(endpoint);
  await ensureTables(client, prefix);
  client.destroy();
  return { endpoint, prefix, ...(proxy ? { proxy } : {}) };
}
