// A first start cut short right after it created the bootstrap superadmin (npm start killed, or DynamoDB Local's
// answer lost past every retry) must not lose the generated password: the account is made once, so no later start
// prints another. Here every answer to the account's transaction is lost on the wire (DynamoDB committed it), so the
// start fails just after the commit, where a SIGKILL would stop it; the next start on the folder still knows it.
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { LocalService } from '../../infra/local/service.js';
import { startDynamoProxy, type DynamoProxy } from '../support/dynamo-proxy.js';
import { startTestService } from '../support/local-service.js';

let proxy: DynamoProxy | undefined;
let service: LocalService | undefined;

afterAll(async () => {
  await service?.stop();
  await proxy?.close();
});

describe('a first start cut short after the bootstrap superadmin was created', () => {
  it('keeps the generated password, so the next start still names it', async () => {
    proxy = await startDynamoProxy(inject('dynamoEndpoint'));
    const dataDir = await mkdtemp(join(tmpdir(), 'fleet-bootstrap-cut-'));
    const tablePrefix = `boot${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}-`;
    let committed = 0;
    const stop = proxy.watch((r) => {
      const isBootstrap = r.operation === 'TransactWriteItems' && JSON.stringify(r.input).includes('"bootstrap"');
      if (isBootstrap) committed++;
      return isBootstrap ? 'lose-answer' : undefined;
    });
    await expect(startTestService({ dataDir, tablePrefix, dynamoEndpoint: proxy.endpoint, demoClusters: 0, schedules: {} })).rejects.toThrow();
    stop();
    expect(committed).toBeGreaterThan(0);

    service = await startTestService({ dataDir, tablePrefix, dynamoEndpoint: proxy.endpoint, demoClusters: 0, schedules: {} });
    expect(service.adminPasswordFile, 'the password file of the start that created the account').toBe(join(dataDir, 'admin-password'));
    const [username, password] = (await readFile(join(dataDir, 'admin-password'), 'utf8')).trim().split(' ');
    const res = await fetch(`${service.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username, password }),
    });
    expect(res.status).toBe(200);
  }, 120_000);
});
