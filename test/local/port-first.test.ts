// Starting the local service. It takes its port before anything else: a port in use stops the start
// at once, naming PORT, before DynamoDB Local is started (whose own free port can then never be the
// service's), and until the service is ready the port answers a 503 to retry. A data folder another
// running service uses, or another start is claiming at the same moment, is refused; a demo load an earlier start left unfinished is reported.
import { existsSync, statSync } from 'node:fs';
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../infra/local/dynamodb-local.js';
import { RUNTIME_FILE } from '../../infra/local/runtime-file.js';
import { FOLDER_LOCK_FILE, startLocalService } from '../../infra/local/service.js';
import { startTestService } from '../support/local-service.js';

describe('the local service’s port', () => {
  it('in use: the start fails at once naming PORT, and starts no DynamoDB Local', async () => {
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
    const port = (holder.address() as { port: number }).port;
    const dataDir = await mkdtemp(join(tmpdir(), 'fleet-port-used-'));
    try {
      // No dynamoEndpoint: the service would start its own emulator first if it did not take the port first.
      await expect(startLocalService({ port, dataDir })).rejects.toThrow(`port ${port} on 127.0.0.1 is in use; stop what holds it or set PORT to another port`);
      expect(existsSync(join(dataDir, 'dynamodb-local.pid'))).toBe(false);
      expect(existsSync(join(dataDir, 'dynamodb'))).toBe(false);
      // Nor is a data folder made for a start that never ran.
      const never = join(dataDir, 'never-made');
      await expect(startLocalService({ port, dataDir: never })).rejects.toThrow(`port ${port} on 127.0.0.1 is in use`);
      expect(existsSync(never)).toBe(false);
    } finally {
      await new Promise((r) => holder.close(r));
    }
  });

  it('a data folder another running service uses: the start fails naming it, and kills none of its database', async () => {
    // A live node process stands for the other service, as its runtime file names it.
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    const dataDir = await mkdtemp(join(tmpdir(), 'fleet-folder-used-'));
    try {
      await writeFile(join(dataDir, RUNTIME_FILE), JSON.stringify({ pid: other.pid, url: 'http://localhost:3999' }));
      await writeFile(join(dataDir, 'dynamodb-local.pid'), String(other.pid)); // its emulator, which must not be killed
      await expect(startLocalService({ port: await freePort(), dataDir })).rejects.toThrow(
        `${dataDir} is in use by the service at http://localhost:3999 (pid ${other.pid}): stop it first, or set DATA_DIR to another folder`,
      );
      expect(other.exitCode).toBeNull();
      expect(existsSync(join(dataDir, 'dynamodb'))).toBe(false);
    } finally {
      other.kill();
    }
  });

  it('two starts in one fresh folder at once: one claims it and runs, the other is refused before touching its database', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'fleet-folder-race-'));
    // Both with their own emulator (no dynamoEndpoint): neither has written its runtime file yet when the other checks.
    const starts = await Promise.allSettled([0, 1].map(async () => startLocalService({ port: await freePort(), dataDir, demoClusters: 0 })));
    const started = starts.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const refused = starts.flatMap((s) => (s.status === 'rejected' ? [s.reason as Error] : []));
    try {
      expect(started).toHaveLength(1);
      expect(refused.map((e) => e.message)).toEqual([
        `${dataDir} is in use by another start of the service (pid ${process.pid}): stop it first, or set DATA_DIR to another folder (should no service run there, delete ${join(dataDir, FOLDER_LOCK_FILE)})`,
      ]);
      // The one that runs still has its database: the refused start killed no emulator.
      expect((await fetch(`${started[0]!.url}/api/health-check`)).status).toBe(200);
    } finally {
      await started[0]?.stop();
    }
    expect(existsSync(join(dataDir, FOLDER_LOCK_FILE))).toBe(false);
  }, 120_000);

  it('says a demo load an earlier start left unfinished is incomplete, rather than finish it (its samples would count twice)', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'fleet-demo-cut-'));
    await writeFile(join(dataDir, 'demo-fleet.loading'), '2026-12-01T00:00:00.000Z\n');
    await chmod(dataDir, 0o755); // as a folder made before the start made it the owner's alone
    const service = await startTestService({ dataDir, demoClusters: 0 });
    try {
      expect(service.demoIncomplete).toBe(true);
      expect(service.demo).toBeUndefined();
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    } finally {
      await service.stop();
    }
  });

  it('answers 503 problem+json with Retry-After while the service starts, then the API', async () => {
    const port = await freePort();
    const starting = startTestService({ port });
    // The first answer the port gives comes while the tables, the superadmin and the handlers are still loading.
    let first: Response | undefined;
    for (let i = 0; i < 20_000 && !first; i++) first = await fetch(`http://127.0.0.1:${port}/api/health-check`).catch(() => undefined);
    const service = await starting;
    try {
      expect(first?.status).toBe(503);
      expect(first?.headers.get('content-type')).toBe('application/problem+json');
      expect(first?.headers.get('retry-after')).toBe('5');
      expect(first?.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await first?.json()).toEqual({
        type: 'about:blank',
        title: 'Service Unavailable',
        status: 503,
        detail: 'The service is starting; retry in a few seconds.',
      });
      const ready = await fetch(`${service.url}/api/health-check`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ok', service: 'fleet-health' });
    } finally {
      await service.stop();
    }
  });
});
