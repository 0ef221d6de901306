// The whole local service on the tests' shared DynamoDB Local, with tables of
// its own and a throwaway data folder.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { startLocalService, type LocalService, type LocalServiceOptions } from '../../infra/local/service.js';

export async function startTestService(options: Partial<LocalServiceOptions> = {}): Promise<LocalService> {
  const name = `svc${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;
  return startLocalService({
    port: 0,
    dataDir: await mkdtemp(join(tmpdir(), `fleet-${name}-`)),
    dynamoEndpoint: inject('dynamoEndpoint'),
    tablePrefix: `${name}-`,
    ...options,
  });
}
