// A bad core setting (LOG_LEVEL, STAGE, CORS_ORIGINS…) is read by the service's modules as they load. `npm start` and
// `npm run invoke` say it in one line naming the variable, as they say every other bad setting, not as a stack trace
// thrown from a static import; `npm run ingest`, which sends HTTP and runs none of the service, does not read it at all.
// A DATA_DIR that cannot be made a folder is named too.
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../infra/local/dynamodb-local.js';

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'fleet-cli-settings-'));
});

/** Runs a local script as its npm script does (node with tsx), with the given environment added. */
function run(script: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', script, ...args],
      { env: { ...process.env, DATA_DIR: dataDir, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

/** An ingest file `name` in the data folder holding one log event: what the ingest CLI reads, then sends. */
async function oneEventFile(name: string): Promise<string> {
  const file = join(dataDir, name);
  const event = { cluster_id: '6a0e8f4c-3b1d-4c2e-9f7a-1b2c3d4e5f60', at: new Date().toISOString(), level: 'info', message: 'x' };
  await writeFile(file, JSON.stringify({ events: [event] }));
  return file;
}

const LOG_LEVEL_RULE = 'LOG_LEVEL must be one of debug, info, warn, error, silent.';

describe('a bad setting', () => {
  it('stops npm start with one line naming it, no stack trace', async () => {
    const port = await freePort();
    for (const [name, value, says] of [
      ['LOG_LEVEL', 'loud', LOG_LEVEL_RULE],
      ['STAGE', 'staging', 'STAGE must be one of dev, prod.'],
      ['AWS_ENDPOINT_URL', 'not a url', 'AWS_ENDPOINT_URL is not a valid URL.'],
    ]) {
      const out = await run('infra/local/start.ts', [], { PORT: String(port), [name!]: value! });
      expect(out.code, out.stderr).toBe(1);
      expect(out.stderr.trim()).toBe(`Could not start: ${says}`);
    }
  }, 120_000);

  it('DATA_DIR that cannot be a folder stops npm start naming it', async () => {
    const file = join(dataDir, 'a-file');
    await writeFile(file, '');
    const out = await run('infra/local/start.ts', [], { PORT: String(await freePort()), DATA_DIR: join(file, 'data') });
    expect(out.code, out.stderr).toBe(1);
    expect(out.stderr.trim()).toMatch(new RegExp(`^Could not start: DATA_DIR ${join(file, 'data')} cannot be the data folder: ENOTDIR`));
  }, 60_000);

  it('fails npm run invoke as Lambda reports an init error, naming it', async () => {
    // A running service as the invoke CLI finds one: its runtime file names a live process (this one).
    await writeFile(
      join(dataDir, 'local-service.json'),
      JSON.stringify({ pid: process.pid, url: 'http://localhost:1', dynamoEndpoint: 'http://127.0.0.1:1', tablePrefix: 'cli-' }),
    );
    const out = await run('infra/local/invoke-cli.ts', ['recompute'], { LOG_LEVEL: 'loud' });
    expect(out.code, out.stderr).toBe(1);
    expect(JSON.parse(out.stderr.trim())).toEqual({ errorType: 'ConfigError', errorMessage: LOG_LEVEL_RULE });
  }, 60_000);

  it('is not read by npm run ingest, which only sends HTTP', async () => {
    const file = await oneEventFile('one.json');
    const port = await freePort();
    const out = await run('infra/local/ingest-cli.ts', [file], { LOG_LEVEL: 'loud', INGEST_URL: `http://127.0.0.1:${port}`, INGEST_TOKEN: 'any' });
    expect(out.code).toBe(1);
    expect(out.stderr).not.toContain('LOG_LEVEL');
    expect(out.stderr).toContain(`Could not reach the service at http://127.0.0.1:${port}`);
  }, 60_000);
});

describe('a file a command line names', () => {
  // npm runs a script in the package's folder and names the folder the command was typed in as INIT_CWD.
  it('is read from where the command was typed (INIT_CWD), and a missing one is named with its whole path', async () => {
    await oneEventFile('typed-here.json');
    const port = await freePort();
    const remote = { INGEST_URL: `http://127.0.0.1:${port}`, INGEST_TOKEN: 'any' };
    const read = await run('infra/local/ingest-cli.ts', ['typed-here.json'], { ...remote, INIT_CWD: dataDir });
    expect(read.stderr).toContain(`Could not reach the service at http://127.0.0.1:${port}`); // read, then sent
    const elsewhere = await run('infra/local/ingest-cli.ts', ['typed-here.json'], { ...remote, INIT_CWD: tmpdir() });
    expect([elsewhere.code, elsewhere.stderr]).toEqual([1, expect.stringContaining('typed-here.json: ENOENT')]);

    const missing = await run('infra/local/invoke-cli.ts', ['recompute', 'no-such-event.json'], { INIT_CWD: dataDir });
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toContain(`cannot read the payload ${join(dataDir, 'no-such-event.json')}: ENOENT`);
  }, 60_000);

  it('npm run ingest without a token names the token file it looked for', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'fleet-cli-no-token-'));
    const out = await run('infra/local/ingest-cli.ts', [join(dataDir, 'typed-here.json')], {
      DATA_DIR: empty,
      PORT: String(await freePort()),
      INGEST_TOKEN: '',
    });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`(${join(empty, 'ingest-token')} is missing)`);
  }, 60_000);
});
