// The whole service on one machine: DynamoDB Local, tables, bootstrap
// superadmin, the HTTP server in front of the route-group handlers, and the
// schedules (EventBridge's, plus the living demo feed). `npm start` (start.ts)
// and the end-to-end tests both call startLocalService.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { loadDemoFleet, type DemoLoadResult } from './demo-fleet.js';
import { writeFileAtomically } from './atomic-write.js';
import { adoptSharedDatabase, databaseFileOf, freePort, localClient, startDynamoDbLocal, type DynamoDbLocal } from './dynamodb-local.js';
import { runs } from './processes.js';
import { type RuntimeInfo, runningService, runtimeFileOf } from './runtime-file.js';
import type { ConfigConcern } from '../../shared/config/concerns.js';
import { coreSettings, DYNAMODB_LOCAL_KEY } from '../../shared/config/core.js';
import { checkSettings, resetSettings } from '../../shared/config/env.js';
import { createLogger } from '../../shared/log.js';
import { localWorkersSettled } from '../../shared/worker-invoke.js';
import { scheduledWorkers, type WorkerName } from '../../shared/workers.js';
import { CONSOLE_OUT, ensureConsoleBuilt } from '../console.js';
import { functionConcerns, invokeLocal, registerLocalWorkers } from './functions.js';
import { startLocalSchedules, type ScheduledJob } from './schedules.js';
import { INGEST_TOKEN_FILE } from './settings.js';
import { answerClientErrors, answerStarting, loadGroupHandlers, localRequestListener } from './server.js';
import { ensureTables } from './tables.js';

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
  /**
   * Run the declared worker schedules in-process, every N seconds per worker
   * (absent: none, as in most tests). The first `recompute` runs right after start.
   */
  schedules?: Partial<Record<WorkerName, number>>;
  /** Keep a demo fleet alive: `tick` runs after start and then every N seconds. */
  demoFeed?: { everySeconds: number; tick: () => Promise<unknown> };
  /**
   * Aborted while starting (npm start got a signal): DynamoDB Local is stopped at once and the start
   * rejects, rather than leave the emulator running once this process is gone.
   */
  signal?: AbortSignal;
  /**
   * DynamoDB Local (the one this start runs) ended under the running service: every request fails from then on.
   * The service logs it as an error either way; npm start stops, saying so (`how`: its exit code or signal).
   */
  onEmulatorExit?: (how: string) => void;
  /** Each step of the start as it begins (a first start takes 20–60 s, and said nothing until it was up). */
  onProgress?: (step: string) => void;
}

export interface LocalService {
  url: string;
  dynamoEndpoint: string;
  /** Set when this start created the bootstrap superadmin with a generated password. */
  generatedAdminPassword?: string;
  /**
   * The file holding a generated bootstrap password (mode 600), when one exists: written the moment the account is
   * made, so a first start cut short (Ctrl-C, a failed console build) does not lose the only password of the only
   * superadmin. The operator deletes it once the password is changed ("Your account").
   */
  adminPasswordFile?: string;
  adminUsername: string;
  /** Bearer token the ingest routes accept (INGEST_TOKEN, or one kept under the data folder). */
  ingestToken: string;
  /** Bearer token GET /api/metrics accepts (SCRAPE_TOKEN, or one kept under the data folder). */
  scrapeToken: string;
  /** What the demo loader stored on this start, when it ran. */
  demo?: DemoLoadResult;
  /** An earlier start's demo load was cut short: its clusters lack part of their history (deleting DATA_DIR loads it whole). */
  demoIncomplete?: boolean;
  /** Settles when the runs made at start (demo feed catch-up, then recompute) have finished. */
  startupRuns: Promise<void>;
  /** Runs a scheduled job now (a worker name or `demo-feed`); throws when it is not scheduled. */
  runScheduled(name: string): Promise<unknown>;
  stop(): Promise<void>;
}

/** How long a stop waits for the runs and workers in progress (what `npm start` says on Ctrl-C). */
const STOP_GRACE_MS = 10_000;
/** Under DATA_DIR from the start's first step to its stop: the pid of the service that claimed the folder. */
export const FOLDER_LOCK_FILE = 'local-service.lock';
/** Under DATA_DIR while its DynamoDB Local runs: that process's pid. */
export const EMULATOR_PID_FILE = 'dynamodb-local.pid';
/** Under DATA_DIR: `<username> <password>` of a generated bootstrap superadmin, until the operator deletes it. */
export const ADMIN_PASSWORD_FILE = 'admin-password';
/** Under DATA_DIR while the demo fleet loads: left behind, the load was cut short. */
const DEMO_LOADING_FILE = 'demo-fleet.loading';

const log = createLogger('local');

/**
 * Refuses a folder another `npm start` is using: its emulator is no stale one to kill (the running service
 * would fail every request), and two emulators must not open one database. A service killed outright left
 * its runtime file behind; its process is gone, so the start goes on.
 */
async function refuseFolderInUse(dataDir: string): Promise<void> {
  const runtime = await runningService(dataDir);
  // This process's own record: another start in this process wrote it (tests start several services in one).
  if (typeof runtime === 'object' && runtime.pid !== process.pid) {
    throw new Error(
      `${dataDir} is in use by the service at ${runtime.url} (pid ${runtime.pid}): stop it first, or set DATA_DIR to another folder` +
        ` (should no service run there, delete ${runtimeFileOf(dataDir)})`,
    );
  }
}

/**
 * Claims the folder for this process before anything in it is touched: a lock file made exclusively
 * (`wx`, O_EXCL), so of two starts at the same moment one is refused, where the runtime file (written
 * once the service is ready) let both go on and the second kill the first's emulator as stale. A lock
 * whose process is gone (a start killed outright) is taken over. Returns its release.
 */
async function claimFolder(dataDir: string): Promise<() => Promise<void>> {
  await refuseFolderInUse(dataDir);
  const lock = join(dataDir, FOLDER_LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(lock, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return () => rm(lock, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const pid = Number((await readFile(lock, 'utf8').catch(() => '')).trim());
    // This process's own pid: another start in this process holds it (tests start several services in one).
    if (pid === process.pid || runs(pid, 'node'))
      throw new Error(
        `${dataDir} is in use by another start of the service (pid ${pid}): stop it first, or set DATA_DIR to another folder` +
          ` (should no service run there, delete ${lock})`,
      );
    await rm(lock, { force: true }); // left by a start killed outright
  }
  throw new Error(`${dataDir}: another start claimed this folder at the same moment; stop it first, or set DATA_DIR to another folder`);
}

/** Kills a DynamoDB Local left behind by a previous run that was killed hard, and waits until it is gone. */
async function killStaleEmulator(pidFile: string): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number(await readFile(pidFile, 'utf8'));
  if (runs(pid, 'DynamoDBLocal')) {
    process.kill(pid, 'SIGTERM');
    // The new emulator opens the same database file: not while the old one still holds it.
    for (let i = 0; i < 100 && runs(pid, 'DynamoDBLocal'); i++) await new Promise((r) => setTimeout(r, 100));
  }
  await rm(pidFile, { force: true });
}

/** Under DATA_DIR: the access key id whose database (DATA_DIR/dynamodb/<key>_local.db) is the service's. */
export const DATABASE_KEY_FILE = 'dynamodb-local-key';

/**
 * The key of the folder's data. DynamoDB Local answers on every interface, and its database is this key's, which
 * nobody on the network knows. It is the folder's alone, never a setting: one given in the environment opened an
 * empty database beside the folder's, whose next start made a new superadmin over the kept password file, and a
 * CLI run without it wrote another key into a running service's folder. A folder whose key file went missing is
 * told its key by its database's name (`<key>_local.db`); a new folder gets a generated one.
 */
async function databaseKey(dataDir: string): Promise<string> {
  const file = join(dataDir, DATABASE_KEY_FILE);
  if (existsSync(file)) {
    const kept = (await readFile(file, 'utf8')).trim();
    if (!DYNAMODB_LOCAL_KEY.test(kept))
      throw new Error(`${file} must hold 16 to 128 letters and digits: the key of this folder's database, DATA_DIR/dynamodb/<key>_local.db`);
    return kept;
  }
  const named = (await readdir(join(dataDir, 'dynamodb')).catch(() => []))
    .map((name) => /^([A-Za-z0-9]+)_local\.db$/.exec(name)?.[1])
    .filter((key): key is string => key !== undefined && DYNAMODB_LOCAL_KEY.test(key));
  if (named.length > 1)
    throw new Error(
      `${file} is missing and ${join(dataDir, 'dynamodb')} holds ${named.length} databases: write the key of this folder's (the name before _local.db) into it`,
    );
  const key = named[0] ?? randomBytes(24).toString('hex');
  await writeFileAtomically(file, `${key}\n`, 0o600);
  return key;
}

/** The variable's value, or a secret generated once and kept (mode 600) under the data folder. */
async function localSecret(dataDir: string, variable: string, file: string): Promise<string> {
  if (process.env[variable]) return process.env[variable]!;
  const path = join(dataDir, file);
  if (existsSync(path)) return (await readFile(path, 'utf8')).trim();
  const secret = randomBytes(48).toString('base64url');
  await writeFileAtomically(path, `${secret}\n`, 0o600);
  return secret;
}

/** Where npm start keeps the bearer token GET /api/metrics accepts from a Prometheus scraper (unless SCRAPE_TOKEN is set). */
export const SCRAPE_TOKEN_FILE = 'scrape-token';
export const DEFAULT_TABLE_PREFIX = 'fleet-health-local-';

/**
 * The environment the handlers expect, exactly as on Lambda: DynamoDB Local's
 * endpoint, the table prefix, and the JWT key and ingest token kept under the
 * data folder. The service and `npm run invoke` both call it. The caller's AWS
 * credentials and region are left as they are: Bedrock, SES and SigV4 Prometheus
 * sign with them, while DynamoDB Local's requests are signed with static ones
 * (DYNAMODB_LOCAL, shared/aws/json-call.ts).
 */
export async function applyLocalEnvironment(at: { dataDir: string; dynamoEndpoint: string; tablePrefix: string }): Promise<void> {
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: at.dynamoEndpoint,
    DYNAMODB_LOCAL: 'true',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    TABLE_PREFIX: at.tablePrefix,
    STAGE: process.env.STAGE ?? 'dev',
    JWT_SECRET: await localSecret(at.dataDir, 'JWT_SECRET', 'jwt-secret'),
    INGEST_TOKEN: await localSecret(at.dataDir, 'INGEST_TOKEN', INGEST_TOKEN_FILE),
    SCRAPE_TOKEN: await localSecret(at.dataDir, 'SCRAPE_TOKEN', SCRAPE_TOKEN_FILE),
    DYNAMODB_LOCAL_KEY: await databaseKey(at.dataDir),
  });
  // Every function runs in this process: validate every concern any of them declares, so a bad
  // setting stops the start naming the variable instead of failing a request later.
  resetSettings();
  checkSettings(declaredConcerns());
}

/** The configuration concerns of every route group and worker (shared/config/concerns.ts). */
export function declaredConcerns(): ConfigConcern[] {
  return [...new Set(functionConcerns().flatMap((f) => f.concerns))];
}

/**
 * The runs a stopped service left holding their leases (a refresh, a patrol scan, a metrics pull, an agent task: npm start killed,
 * or stopped past its grace), ended at the next start. Its workers ran in-process and its tables are this start's
 * alone (the folder's claim; a test's own prefix), so none of them can still be running. Left alone, a refresh
 * after the restart joined the dead run and answered 202 `running` for 5.5 minutes, a patrol trigger answered
 * `already_running` for 2, and Pull now for 11, and an agent task stayed `running` for 10 before its retry: each
 * lease's length, which on AWS covers a worker's timeout.
 */
async function endWorkLeftBehind(): Promise<void> {
  const [
    { lockHolder, releaseLock },
    { endRefreshesLeftBehind },
    { abandonReport },
    { PATROL_LOCK },
    { PULL_LOCK },
    { failTaskAttempt, listOpenTasks, stoppedAttemptSpend },
    { ConditionFailed },
  ] = await Promise.all([
    import('../../shared/db/locks.js'),
    import('../../shared/scoring/refresh-claim.js'),
    import('../../shared/patrol/run.js'),
    import('../../shared/patrol/lock.js'),
    import('../../shared/metric-pull/lock.js'),
    import('../../shared/db/investigations.js'),
    import('../../shared/db/client.js'),
  ]);
  const refreshes = await endRefreshesLeftBehind('the service stopped while the refresh ran (it was stopped or killed): start it again');
  const patrol = await lockHolder(PATROL_LOCK);
  if (patrol) await abandonReport(patrol.owner, 'the service stopped while the scan ran (it was stopped or killed)');
  const pull = await lockHolder(PULL_LOCK);
  if (pull) await releaseLock(PULL_LOCK, pull.owner);
  // An agent task's attempt ends as a failed one would (its retry at once; failed after the last attempt), not at its lease.
  const tasks: string[] = [];
  for (const task of (await listOpenTasks()).filter((t) => t.status === 'running')) {
    const reason = `attempt ${task.attempts} stopped without finishing: the service stopped while it ran`;
    // What it spent on the model stays the task's, for the investigation that ends it (the ledger's calls of it).
    const now = new Date();
    await failTaskAttempt(task, reason, true, now, now, await stoppedAttemptSpend(task)).then(
      () => tasks.push(task.task_id),
      (error: unknown) => {
        if (!(error instanceof ConditionFailed)) throw error;
      },
    );
  }
  if (refreshes.length > 0 || patrol || pull || tasks.length > 0) {
    log.warn('ended the runs a stopped service left running', {
      refresh_ids: refreshes,
      patrol_report_id: patrol?.owner,
      metrics_pull: pull !== undefined,
      agent_task_ids: tasks,
    });
  }
}

/** The EventBridge timetable (and the demo feed) as in-process jobs. */
function scheduledJobs(options: LocalServiceOptions): ScheduledJob[] {
  const jobs: ScheduledJob[] = scheduledWorkers().flatMap(({ name, schedule }) => {
    const seconds = options.schedules?.[name];
    return seconds ? [{ name, everyMs: seconds * 1000, run: () => invokeLocal(name, schedule.event ?? {}) }] : [];
  });
  if (options.demoFeed) jobs.push({ name: 'demo-feed', everyMs: options.demoFeed.everySeconds * 1000, run: options.demoFeed.tick });
  return jobs;
}

export async function startLocalService(options: LocalServiceOptions): Promise<LocalService> {
  const dataDir = resolve(options.dataDir);
  // The port is taken first and answers 503 until the service is ready: a port in use stops the start
  // at once, before DynamoDB Local (the emulator's free port can never be this one) and before the data
  // folder is made (a start refused for its port left an empty DATA_DIR behind).
  const server = answerClientErrors(createServer(answerStarting));
  await listen(server, options.port);
  // Its database holds password hashes, the audit log and chats: the owner's alone, as its token files are.
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    await chmod(dataDir, 0o700); // a folder made before (mkdir leaves an existing one as it is)
  } catch (error) {
    await new Promise<void>((r) => server.close(() => r()));
    // Named as every other bad setting is: the bare 'ENOTDIR: not a directory, mkdir …' did not say which setting to mend.
    throw new Error(`DATA_DIR ${dataDir} cannot be the data folder: ${(error as Error).message}`);
  }
  const url = `http://localhost:${(server.address() as AddressInfo).port}`;
  // Links in mail and tickets, and the embed's own origin, name this server (PORT may move it off 3000) unless APP_URL is set.
  const ownsAppUrl = process.env.APP_URL === undefined;
  if (ownsAppUrl) process.env.APP_URL = url;
  const forgetAppUrl = () => {
    if (ownsAppUrl && process.env.APP_URL === url) delete process.env.APP_URL;
  };
  const closeServer = async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  };

  const progress = options.onProgress ?? (() => {});
  let dynamo: DynamoDbLocal | undefined;
  const pidFile = join(dataDir, EMULATOR_PID_FILE);
  let endpoint = options.dynamoEndpoint;
  // The folder's claim: only a start that runs its own emulator in it takes one.
  let releaseFolder = async () => {};
  const tablePrefix = options.tablePrefix ?? DEFAULT_TABLE_PREFIX;
  try {
    let emulatorPort: number | undefined;
    if (!endpoint) {
      releaseFolder = await claimFolder(dataDir);
      await killStaleEmulator(pidFile);
      emulatorPort = await freePort();
      endpoint = `http://127.0.0.1:${emulatorPort}`;
    }
    // The settings are checked before the emulator starts: a bad one stopped the start only after it had run and
    // made its database under DATA_DIR (7–10 s where the start's own settings are refused in 1).
    await applyLocalEnvironment({ dataDir, dynamoEndpoint: endpoint, tablePrefix });
    if (emulatorPort !== undefined) {
      const dbPath = join(dataDir, 'dynamodb');
      progress(`Starting DynamoDB Local (its data in ${dbPath})`);
      if ((await adoptSharedDatabase(dbPath, coreSettings().dynamoLocalKey)) === 'both')
        log.warn(
          `${join(dbPath, 'shared-local-instance.db')} is a database an older version of the service made here, not this folder's data (${databaseFileOf(coreSettings().dynamoLocalKey)} beside it): delete it once nothing needs it`,
        );
      dynamo = await startDynamoDbLocal({ dbPath, port: emulatorPort, ownProcessGroup: true, accessKeyId: coreSettings().dynamoLocalKey });
      await writeFileAtomically(pidFile, String(dynamo.pid));
    }
  } catch (error) {
    await closeServer();
    await releaseFolder();
    forgetAppUrl();
    throw error;
  }
  // The step in progress then fails against the stopped emulator, and the catch below cleans up.
  const stopEmulator = () => void dynamo?.stop();
  options.signal?.addEventListener('abort', stopEmulator, { once: true });

  try {
    options.signal?.throwIfAborted();
    progress('Creating the tables it lacks');
    const client = localClient(endpoint, coreSettings().dynamoLocalKey);
    await ensureTables(client, tablePrefix);
    client.destroy();

    const { ensureBootstrapAdmin } = await import('../../shared/auth/bootstrap.js');
    const adminUsername = options.adminUsername ?? 'admin';
    const adminPasswordFile = join(dataDir, ADMIN_PASSWORD_FILE);
    // A generated password is in its file before the account is written: a start killed in between keeps it.
    const bootstrap = await ensureBootstrapAdmin(adminUsername, options.adminEmail ?? 'admin@fleet-health.local', options.adminPassword, (password) =>
      writeFileAtomically(adminPasswordFile, `${adminUsername} ${password}\n`, 0o600),
    );
    const passwordKept = existsSync(adminPasswordFile);

    let demo: DemoLoadResult | undefined;
    const { fleetIsEmpty } = await import('../../shared/db/clusters.js');
    // Marked while it loads: a load cut short (Ctrl-C, a crash) is not finished by a later start (the fleet is no
    // longer empty, and ingesting the samples again would count them twice), so that start says so instead.
    const demoLoading = join(dataDir, DEMO_LOADING_FILE);
    const demoCutShort = existsSync(demoLoading);
    if ((options.demoClusters ?? 0) > 0 && (await fleetIsEmpty())) {
      await writeFileAtomically(demoLoading, `${new Date().toISOString()}\n`);
      progress(`Loading the demo fleet (${options.demoClusters} clusters, with their history)`);
      demo = await loadDemoFleet(options.demoClusters!);
      await rm(demoLoading, { force: true });
    }
    const demoIncomplete = demoCutShort && !demo;

    await endWorkLeftBehind();
    await registerLocalWorkers();
    await ensureConsoleBuilt(progress);
    const serve = localRequestListener({ handlers: await loadGroupHandlers(), webRoot: CONSOLE_OUT });
    server.off('request', answerStarting).on('request', serve);
    const runtimeFile = runtimeFileOf(dataDir);
    const runtime: RuntimeInfo = { pid: process.pid, url, dynamoEndpoint: endpoint, tablePrefix };
    await writeFileAtomically(runtimeFile, `${JSON.stringify(runtime, null, 2)}\n`);

    // After start: the demo feed catches up first, then one recompute, so a new
    // user finds AI issues, agent tasks and investigations within a minute.
    const jobs = scheduledJobs(options);
    const schedules = startLocalSchedules(jobs, log);
    const has = (name: string) => jobs.some((j) => j.name === name);
    const startupRuns = (async () => {
      if (has('demo-feed')) await schedules.runNow('demo-feed');
      if (has('recompute')) await schedules.runNow('recompute');
    })();

    // Each request would answer 503 "retry in a few seconds" and the health check 200, with nothing saying why.
    let stopping = false;
    void dynamo?.unexpectedExit.then((how) => {
      if (stopping) return; // ended by whatever stops the service (a process manager signalling the whole group)
      log.error('DynamoDB Local stopped under the running service: every request fails until the service starts again', { how, data_dir: dataDir });
      options.onEmulatorExit?.(how);
    });

    return {
      url,
      dynamoEndpoint: endpoint,
      adminUsername,
      generatedAdminPassword: bootstrap.generatedPassword,
      ...(demoIncomplete ? { demoIncomplete } : {}),
      ...(passwordKept ? { adminPasswordFile } : {}),
      ingestToken: process.env.INGEST_TOKEN!,
      scrapeToken: process.env.SCRAPE_TOKEN!,
      demo,
      startupRuns,
      runScheduled: (name) => schedules.runNow(name),
      stop: async () => {
        stopping = true;
        // Timers first, then one grace of 10 s for runs and workers in progress (as Lambda would not cut them), shared.
        const graceEnds = Date.now() + STOP_GRACE_MS;
        await schedules.stop(STOP_GRACE_MS);
        await Promise.race([localWorkersSettled(), new Promise((r) => setTimeout(r, Math.max(0, graceEnds - Date.now())).unref())]);
        await rm(runtimeFile, { force: true });
        await closeServer();
        await dynamo?.stop();
        await rm(pidFile, { force: true });
        await releaseFolder();
        forgetAppUrl();
      },
    };
  } catch (error) {
    await closeServer();
    await dynamo?.stop();
    await rm(pidFile, { force: true });
    await releaseFolder();
    forgetAppUrl();
    throw error;
  } finally {
    options.signal?.removeEventListener('abort', stopEmulator);
  }
}

/** Listens on 127.0.0.1 (port 0: any free port); a port in use is named, with the setting that moves it. */
function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolveListen, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? new Error(`port ${port} on 127.0.0.1 is in use; stop what holds it or set PORT to another port`) : error),
    );
    server.listen(port, '127.0.0.1', () => resolveListen());
  });
}
