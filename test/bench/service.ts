// The local service on the bench's DynamoDB Local tables, and an admin token for it.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalService, type LocalService } from '../../infra/local/service.js';

export async function startBenchService(): Promise<{ service: LocalService; token: string }> {
  const service = await startLocalService({
    port: 0,
    dataDir: await mkdtemp(join(tmpdir(), 'fleet-bench-')),
    dynamoEndpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB!,
    tablePrefix: process.env.TABLE_PREFIX!,
    adminPassword: 'bench-admin-password',
  });
  const login = await fetch(`${service.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'bench-admin-password' }),
  });
  return { service, token: ((await login.json()) as { access_token: string }).access_token };
}
