// Runs `npm start` exactly as a developer does: fresh data folder, health
// check within 60 s, clean shutdown (no DynamoDB Local left behind), data kept
// across a restart; the first scheduled recompute bringing AI issues and
// investigations; and `npm run invoke` against the running service.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { freePort, localClient } from '../../infra/local/dynamodb-local.js';

const running: ChildProcess[] = [];

afterAll(async () => {
  // SIGTERM first, so a test that failed half-way leaves no DynamoDB Local behind; SIGKILL if it hangs.
  await Promise.all(
    running
      .filter((child) => child.exitCode === null && child.signalCode === null)
      .map(async (child) => {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        if (!(await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 15_000))]))) child.kill('SIGKILL');
      }),
  );
}, 30_000);

/** `detached`: npm leads a process group of its own, as a terminal's foreground job does. */
async function npmStart(dataDir: string, port: number, env: Record<string, string> = {}, detached = false) {
  const child = spawn('npm', ['start'], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), ADMIN_PASSWORD: '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached,
  });
  running.push(child);
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  // npm forwards the signal to the service and may itself end by that signal.
  const exited = new Promise<string>((r) => child.once('exit', (code, signal) => r(code === 0 ? 'ok' : (signal ?? `code ${code}`))));
  const started = Date.now();
  while (!output.includes('Fleet Health Service at')) {
    if (child.exitCode !== null) throw new Error(`npm start exited early:\n${output}`);
    if (Date.now() - started > 60_000) throw new Error(`npm start did not print its URL within 60 s:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, exited, output: () => output, startupMs: Date.now() - started };
}

function alive(pid: number): boolean {
  // process.kill(0, …) signals our own process group, which is always there.
  if (!(Number.isInteger(pid) && pid > 0)) throw new Error(`not a process id: ${pid}`);
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm start', () => {
  it('serves the health check within 60 s, stops cleanly and keeps its data', async () => {
    // A folder the start makes itself: its mode is the start's.
    const dataDir = join(await mkdtemp(join(tmpdir(), 'fleet-start-')), 'data');
    const port = await freePort();

    const first = await npmStart(dataDir, port);
    expect(first.startupMs).toBeLessThan(60_000);
    expect(first.output()).toContain(`http://localhost:${port}`);
    // Each step is named as it begins: a first start takes up to a minute, and said nothing until it was up.
    const emulatorStep = first.output().indexOf(`Starting DynamoDB Local (its data in ${join(dataDir, 'dynamodb')})…`);
    expect(emulatorStep).toBeGreaterThanOrEqual(0);
    expect(emulatorStep).toBeLessThan(first.output().indexOf('Creating the tables it lacks…'));
    expect(first.output().indexOf('Creating the tables it lacks…')).toBeLessThan(first.output().indexOf('Fleet Health Service at'));
    const password = /Bootstrap superadmin created: admin \/ (\S{24})/.exec(first.output())?.[1];
    expect(password).toBeDefined();
    // Kept from the moment the account is made (a first start cut short would lose it), the owner's alone.
    const passwordFile = join(dataDir, 'admin-password');
    expect(readFileSync(passwordFile, 'utf8')).toBe(`admin ${password}\n`);
    expect(statSync(passwordFile).mode & 0o777).toBe(0o600);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    const res = await fetch(`http://localhost:${port}/api/health-check`);
    expect(await res.json()).toEqual({ status: 'ok', service: 'fleet-health' });
    const javaPid = Number(readFileSync(join(dataDir, 'dynamodb-local.pid'), 'utf8'));
    expect(alive(javaPid)).toBe(true);
    // DynamoDB Local answers on every interface: a request under any key but the folder's finds none of the data.
    const { dynamoEndpoint } = JSON.parse(readFileSync(join(dataDir, 'local-service.json'), 'utf8')) as { dynamoEndpoint: string };
    const key = readFileSync(join(dataDir, 'dynamodb-local-key'), 'utf8').trim();
    expect(statSync(join(dataDir, 'dynamodb-local-key')).mode & 0o777).toBe(0o600);
    const tablesUnder = async (accessKeyId: string) => {
      const client = localClient(dynamoEndpoint, accessKeyId);
      try {
        return (await client.send(new ListTablesCommand({}))).TableNames ?? [];
      } finally {
        client.destroy();
      }
    };
    expect(await tablesUnder(key)).toContain('fleet-health-local-users');
    expect(await tablesUnder('local')).toEqual([]);

    first.child.kill('SIGTERM');
    expect(['ok', 'SIGTERM']).toContain(await first.exited);
    for (let i = 0; i < 100 && (alive(javaPid) || existsSync(join(dataDir, 'dynamodb-local.pid'))); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(javaPid)).toBe(false);
    expect(existsSync(join(dataDir, 'dynamodb-local.pid'))).toBe(false);
    await expect(fetch(`http://localhost:${port}/api/health-check`)).rejects.toThrow();

    // A folder from before the key (one shared database, no key file): the next start adopts its data.
    await rename(join(dataDir, 'dynamodb', `${key}_local.db`), join(dataDir, 'dynamodb', 'shared-local-instance.db'));
    await rm(join(dataDir, 'dynamodb-local-key'));
    const second = await npmStart(dataDir, port);
    expect(second.output()).not.toContain('Bootstrap superadmin created'); // the superadmin record persisted
    expect(second.output()).toContain(`The generated password is kept in ${passwordFile} (mode 600)`);
    expect((await fetch(`http://localhost:${port}/api/health-check`)).status).toBe(200);
    const secondJava = Number(readFileSync(join(dataDir, 'dynamodb-local.pid'), 'utf8'));
    second.child.kill('SIGINT');
    expect(['ok', 'SIGINT']).toContain(await second.exited);
    for (let i = 0; i < 100 && alive(secondJava); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(secondJava)).toBe(false);
  }, 150_000);

  it("a terminal's Ctrl-C (the whole process group: npm forwards it as well) is one stop, a gentle one", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'fleet-start-group-'));
    const started = await npmStart(dataDir, await freePort(), { DEMO_CLUSTERS: '0' }, true);
    const javaPid = Number(readFileSync(join(dataDir, 'dynamodb-local.pid'), 'utf8'));
    process.kill(-started.child.pid!, 'SIGINT');
    expect(await started.exited).toBe('ok');
    expect(started.output()).toContain('SIGINT: stopping');
    // The echo npm forwards is not taken for a second press: before, it mostly was (exit 130, files left behind).
    expect(started.output()).not.toContain('SIGINT again');
    for (const file of ['local-service.json', 'local-service.lock', 'dynamodb-local.pid']) expect(existsSync(join(dataDir, file)), file).toBe(false);
    for (let i = 0; i < 100 && alive(javaPid); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(javaPid)).toBe(false);
  }, 90_000);

  it('its output closed (npm start | tee, the tee ended by the same Ctrl-C), a Ctrl-C still stops DynamoDB Local', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'fleet-start-closed-'));
    const started = await npmStart(dataDir, await freePort(), { DEMO_CLUSTERS: '0' });
    const javaPid = Number(readFileSync(join(dataDir, 'dynamodb-local.pid'), 'utf8'));
    const servicePid = (JSON.parse(readFileSync(join(dataDir, 'local-service.json'), 'utf8')) as { pid: number }).pid;
    // The reader of its standard output goes away, as tee does on a terminal's Ctrl-C; the service's line saying it
    // stops then meets a closed pipe (EPIPE), which ended the process before its shutdown, the emulator left running.
    started.child.stdout!.destroy();
    process.kill(servicePid, 'SIGINT');
    expect(await started.exited).toBe('ok');
    for (const file of ['local-service.json', 'local-service.lock', 'dynamodb-local.pid']) expect(existsSync(join(dataDir, file)), file).toBe(false);
    for (let i = 0; i < 100 && alive(javaPid); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(javaPid)).toBe(false);
  }, 90_000);

  it('its database killed under it, it says so and stops, rather than answer every request 503 with nothing said', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'fleet-start-emulator-'));
    const started = await npmStart(dataDir, await freePort(), { DEMO_CLUSTERS: '0' });
    const javaPid = Number(readFileSync(join(dataDir, 'dynamodb-local.pid'), 'utf8'));
    process.kill(javaPid, 'SIGKILL');
    expect(await started.exited).toBe('code 1');
    expect(started.output()).toContain(`DynamoDB Local, the service's database, ended (killed by SIGKILL): stopping. Run npm start again`);
    for (const file of ['local-service.json', 'local-service.lock', 'dynamodb-local.pid']) expect(existsSync(join(dataDir, file)), file).toBe(false);
  }, 90_000);

  it('a second signal stops it at once, DynamoDB Local with it', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'fleet-start-twice-'));
    const started = await npmStart(dataDir, await freePort(), { DEMO_CLUSTERS: '0' });
    const javaPid = Number(readFileSync(join(dataDir, 'dynamodb-local.pid'), 'utf8'));
    // The service's own process, as a terminal's Ctrl-C reaches it (not through npm, which may end first).
    const servicePid = (JSON.parse(readFileSync(join(dataDir, 'local-service.json'), 'utf8')) as { pid: number }).pid;
    process.kill(servicePid, 'SIGTERM');
    // A second signal sent before the first is taken would be merged into it (signals do not queue). Another
    // kind of signal: the same one within half a second is the echo of one Ctrl-C (the test above).
    for (let i = 0; i < 100 && !started.output().includes('SIGTERM: stopping'); i++) await new Promise((r) => setTimeout(r, 50));
    process.kill(servicePid, 'SIGINT');
    expect(await started.exited).toBe('code 130');
    expect(started.output()).toContain('SIGINT again: stopping now');
    for (let i = 0; i < 100 && alive(javaPid); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(javaPid)).toBe(false);
  }, 90_000);

  it('stopped while it starts (the demo fleet loading), it stops DynamoDB Local too rather than leave it running', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'fleet-start-stop-'));
    const child = spawn('npm', ['start'], {
      env: { ...process.env, DATA_DIR: dataDir, PORT: String(await freePort()), ADMIN_PASSWORD: '', LOG_LEVEL: 'warn' },
      stdio: 'ignore',
    });
    running.push(child);
    const exited = new Promise((r) => child.once('exit', r));
    // The pid file is written once DynamoDB Local answers; the tables, the superadmin and the demo fleet come after.
    // Polled as closely as a process manager might: the file is never seen empty or half-written.
    const pidFile = join(dataDir, 'dynamodb-local.pid');
    for (let i = 0; i < 60_000 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 1));
    const javaPid = Number(readFileSync(pidFile, 'utf8'));
    expect(javaPid).toBeGreaterThan(0);
    expect(alive(javaPid)).toBe(true);
    child.kill('SIGTERM');
    await exited;
    for (let i = 0; i < 100 && alive(javaPid); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(javaPid)).toBe(false);
    expect(existsSync(pidFile)).toBe(false);
  }, 90_000);
});

/** `npm run invoke -- <args>` with this data folder: exit code, stdout (the handler's answer), stderr. */
function npmInvoke(dataDir: string, args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolveRun) => {
    const child = execFile(
      'npm',
      ['run', '--silent', 'invoke', '--', ...args],
      { env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, timeout: 120_000 },
      (error, stdout, stderr) => resolveRun({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
    if (stdin !== undefined) child.stdin!.end(stdin);
  });
}

describe('npm start, as a new user finds it', () => {
  const password = 'first-morning-password';
  let dataDir: string;
  let port: number;
  let started: Awaited<ReturnType<typeof npmStart>>;
  let token: string;
  const api = async (path: string) => {
    const res = await fetch(`http://localhost:${port}${path}`, { headers: { Authorization: `Bearer ${token}` } });
    expect(res.status, path).toBe(200);
    return (await res.json()) as any;
  };

  it('within 90 s of a fresh start shows AI issues, agent tasks or investigations, and rule-based investigations', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'fleet-first-'));
    port = await freePort();
    const t0 = Date.now();
    started = await npmStart(dataDir, port, { ADMIN_PASSWORD: password, DEMO_CLUSTERS: '60' });
    expect(started.output()).toMatch(/Schedules: .*recompute every 15 min/);
    expect(started.output()).toMatch(/Demo feed: new samples and incidents every 5 min/);
    const login = await fetch(`http://localhost:${port}/api/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    });
    const answer = (await login.json()) as { access_token: string };
    expect(login.status, JSON.stringify(answer)).toBe(200);
    token = answer.access_token;

    let aiIssues = 0;
    let agentWork = 0;
    let rulesInvestigations = 0;
    while (Date.now() - t0 < 90_000 && !(aiIssues > 0 && agentWork > 0 && rulesInvestigations > 0)) {
      await new Promise((r) => setTimeout(r, 1_000));
      aiIssues = (await api('/api/ai-issues?days=30')).total;
      const investigations = (await api('/api/investigations?days=30')).investigations as { model: string }[];
      agentWork = (await api('/api/investigations/pending-tasks')).total + investigations.length;
      rulesInvestigations = investigations.filter((i) => i.model === 'rules').length;
    }
    expect({ aiIssues: aiIssues > 0, agentWork: agentWork > 0, rulesInvestigations: rulesInvestigations > 0 }).toEqual({
      aiIssues: true,
      agentWork: true,
      rulesInvestigations: true,
    });
    expect(Date.now() - t0).toBeLessThan(90_000);
    expect(existsSync(join(dataDir, 'demo-feed.json'))).toBe(true); // the feed ran its first tick before the recompute
  }, 150_000);

  it('npm run invoke -- recompute and -- patrol-worker run against it, with the events aws lambda invoke takes', async () => {
    const recompute = await npmInvoke(dataDir, ['recompute']);
    expect(recompute.code, recompute.stderr).toBe(0);
    expect(JSON.parse(recompute.stdout)).toMatchObject({ clusters: 60, issues: { failed: 0 }, ai_issues: { failed: 0 } });

    const before = (await api('/api/patrol')).total as number;
    const patrol = await npmInvoke(dataDir, ['patrol-worker', '-'], JSON.stringify({ report_type: 'on_demand', triggered_by: 'cli-test' }));
    expect(patrol.code, patrol.stderr).toBe(0);
    const report = JSON.parse(patrol.stdout) as { status: string; report_id: string };
    expect(report.status).toBe('completed');
    const reports = await api('/api/patrol');
    expect(reports.total).toBe(before + 1);
    expect(reports.reports.find((r: any) => r.report_id === report.report_id)).toMatchObject({ triggered_by: 'cli-test', report_type: 'on_demand' });

    // A route group takes the API Gateway payload-2.0 event, as its Lambda does.
    const event = {
      version: '2.0',
      routeKey: 'GET /api/health-check',
      rawPath: '/api/health-check',
      rawQueryString: '',
      headers: {},
      isBase64Encoded: false,
      requestContext: {
        http: { method: 'GET', path: '/api/health-check', sourceIp: '127.0.0.1' },
        requestId: 'invoke-test',
        routeKey: 'GET /api/health-check',
        stage: '$default',
      },
    };
    const file = join(dataDir, 'health-event.json');
    await writeFile(file, JSON.stringify(event));
    const health = await npmInvoke(dataDir, ['auth', file]);
    expect(health.code, health.stderr).toBe(0);
    expect(JSON.parse(health.stdout)).toMatchObject({ statusCode: 200, body: JSON.stringify({ status: 'ok', service: 'fleet-health' }) });

    const unknown = await npmInvoke(dataDir, ['no-such-function']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no function named no-such-function.*\n.*usage/s);
    const extra = await npmInvoke(dataDir, ['recompute', 'a.json', 'b.json']);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toMatch(/^one payload at most, not a\.json b\.json\nusage/);
    expect((await npmInvoke(dataDir, ['--help'])).code).toBe(0);
  }, 180_000);

  it('npm run invoke says so when the service is not running', async () => {
    started.child.kill('SIGTERM');
    expect(['ok', 'SIGTERM']).toContain(await started.exited);
    const stopped = await npmInvoke(dataDir, ['recompute']);
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toMatch(/no running service found.*npm start/);
  }, 60_000);
});
