// The whole service on one machine: DynamoDB Local, tables, bootstrap
// superadmin, and the HTTP server in front of the route-group handlers.
// `npm start` (start.ts) and the end-to-end tests both call startLocalService.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadDemoFleet, type DemoLoadResult } from './demo-fleet.js';
import { localClient, startDynamoDbLocal, type DynamoDbLocal } from './dynamodb-local.js';
import { createLocalServer, loadGroupHandlers, registerLocalWorkers } from './server.js';
import { ensureTables } from './tables.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface LocalServiceOptions {
  port: number;
  dataDir: string;
  /** Use this DynamoDB-API endpoint instead of starting DynamoDB Local (tests). */
  dynamoEndpoint?: string;
  tablePrefix?: string;
  adminUsername?: string;
  adminEmail?: string;
  adminPassword?: string;
  /** Demo clusters loaded when the fleet is empty (0: none). */
  demoClusters?: number;
}

export interface LocalService {
  url: string;
  dynamoEndpoint: string;
  /** Set when this start created the bootstrap superadmin with a generated password. */
  generatedAdminPassword?: string;
  adminUsername: string;
  /** Bearer token the ingest routes accept (INGEST_TOKEN, or one kept under the data folder). */
  ingestToken: string;
  /** What the demo loader stored on this start, when it ran. */
  demo?: DemoLoadResult;
  stop(): Promise<void>;
}

/** Kills a DynamoDB Local left behind by a previous run that was killed hard. */
async function killStaleEmulator(pidFile: string): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number(await readFile(pidFile, 'utf8'));
  try {
    if (pid > 0 && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('DynamoDBLocal')) process.kill(pid, 'SIGTERM');
  } catch {
    // not running any more
  }
  await rm(pidFile, { force: true });
}

/** The variable's value, or a secret generated once and kept (mode 600) under the data folder. */
async function localSecret(dataDir: string, variable: string, file: string): Promise<string> {
  if (process.env[variable]) return process.env[variable]!;
  const path = join(dataDir, file);
  if (existsSync(path)) return (await readFile(path, 'utf8')).trim();
  const secret = randomBytes(48).toString('base64url');
  await writeFile(path, `${secret}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
  return secret;
}

export const INGEST_TOKEN_FILE = 'ingest-token';

export async function startLocalService(options: LocalServiceOptions): Promise<LocalService> {
  const dataDir = resolve(options.dataDir);
  await mkdir(dataDir, { recursive: true });

  let dynamo: DynamoDbLocal | undefined;
  const pidFile = join(dataDir, 'dynamodb-local.pid');
  let endpoint = options.dynamoEndpoint;
  if (!endpoint) {
    await killStaleEmulator(pidFile);
    dynamo = await startDynamoDbLocal({ dbPath: join(dataDir, 'dynamodb') });
    await writeFile(pidFile, String(dynamo.pid));
    endpoint = dynamo.endpoint;
  }

  try {
    // The handlers read their settings from the environment, exactly as on Lambda.
    const tablePrefix = options.tablePrefix ?? 'fleet-health-local-';
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_DYNAMODB: endpoint,
      AWS_REGION: process.env.AWS_REGION ?? 'local',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      TABLE_PREFIX: tablePrefix,
      STAGE: process.env.STAGE ?? 'dev',
      JWT_SECRET: await localSecret(dataDir, 'JWT_SECRET', 'jwt-secret'),
      INGEST_TOKEN: await localSecret(dataDir, 'INGEST_TOKEN', INGEST_TOKEN_FILE),
    });

    const client = localClient(endpoint);
    await ensureTables(client, tablePrefix);
    client.destroy();

    const { ensureBootstrapAdmin } = await import('../../shared/auth/bootstrap.js');
    const adminUsername = options.adminUsername ?? 'admin';
    const bootstrap = await ensureBootstrapAdmin(adminUsername, options.adminEmail ?? 'admin@fleet-health.local', options.adminPassword);

    let demo: DemoLoadResult | undefined;
    const { fleetIsEmpty } = await import('../../shared/db/clusters.js');
    if ((options.demoClusters ?? 0) > 0 && (await fleetIsEmpty())) demo = await loadDemoFleet(options.demoClusters!);

    await registerLocalWorkers();
    const server = createLocalServer({ handlers: await loadGroupHandlers(), webRoot: join(repoRoot, 'infra', 'web') });
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', reject);
      server.listen(options.port, '127.0.0.1', () => resolveListen());
    });
    const { port } = server.address() as AddressInfo;

    return {
      url: `http://localhost:${port}`,
      dynamoEndpoint: endpoint,
      adminUsername,
      generatedAdminPassword: bootstrap.generatedPassword,
      ingestToken: process.env.INGEST_TOKEN!,
      demo,
      stop: async () => {
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
        await dynamo?.stop();
        await rm(pidFile, { force: true });
      },
    };
  } catch (error) {
    await dynamo?.stop();
    await rm(pidFile, { force: true });
    throw error;
  }
}
