// Runs `npm start` exactly as a developer does: fresh data folder, health
// check within 60 s, clean shutdown (no DynamoDB Local left behind), and data
// kept across a restart.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../infra/local/dynamodb-local.js';

const running: ChildProcess[] = [];

afterAll(() => {
  for (const child of running) if (child.exitCode === null) child.kill('SIGKILL');
});

async function npmStart(dataDir: string, port: number) {
  const child = spawn('npm', ['start'], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), ADMIN_PASSWORD: '', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  // npm forwards the signal to the service and may itself end by that signal.
  const exited = new Promise<string>((r) => child.once('exit', (code, signal) => r(code === 0 ? 'ok' : signal ?? `code ${code}`)));
  const started = Date.now();
  while (!output.includes('Fleet Health Service at')) {
    if (child.exitCode !== null) throw new Error(`npm start exited early:\n${output}`);
    if (Date.now() - started > 60_000) throw new Error(`npm start did not print its URL within 60 s:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, exited, output: () => output, startupMs: Date.now() - started };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm start', () => {
  it('serves the health check within 60 s, stops cleanly and keeps its data', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'fleet-start-'));
    const port = await freePort();

    const first = await npmStart(dataDir, port);
    expect(first.startupMs).toBeLessThan(60_000);
    expect(first.output()).toContain(`http://localhost:${port}`);
    expect(first.output()).toMatch(/Bootstrap superadmin created: admin \/ \S{24}/);
    const res = await fetch(`http://localhost:${port}/api/health-check`);
    expect(await res.json()).toEqual({ status: 'ok', service: 'fleet-health' });
    const javaPid = Number(readFileSync(join(dataDir, 'dynamodb-local.pid'), 'utf8'));
    expect(alive(javaPid)).toBe(true);

    first.child.kill('SIGTERM');
    expect(['ok', 'SIGTERM']).toContain(await first.exited);
    for (let i = 0; i < 100 && (alive(javaPid) || existsSync(join(dataDir, 'dynamodb-local.pid'))); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(javaPid)).toBe(false);
    expect(existsSync(join(dataDir, 'dynamodb-local.pid'))).toBe(false);
    await expect(fetch(`http://localhost:${port}/api/health-check`)).rejects.toThrow();

    const second = await npmStart(dataDir, port);
    expect(second.output()).not.toContain('Bootstrap superadmin created'); // the superadmin record persisted
    expect((await fetch(`http://localhost:${port}/api/health-check`)).status).toBe(200);
    const secondJava = Number(readFileSync(join(dataDir, 'dynamodb-local.pid'), 'utf8'));
    second.child.kill('SIGINT');
    expect(['ok', 'SIGINT']).toContain(await second.exited);
    for (let i = 0; i < 100 && alive(secondJava); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(secondJava)).toBe(false);
  }, 150_000);
});
