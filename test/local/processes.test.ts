// Whether a recorded pid still runs what it was recorded for, asked both ways the local runtime can ask:
// Linux's /proc, and `ps` where there is no /proc (macOS), which this machine has too.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { commandLineOf, runs } from '../../infra/local/processes.js';

describe.each(['proc', 'ps'] as const)('commandLineOf through %s', (via) => {
  it("names a running process's command, and nothing once it has ended", async () => {
    const child = spawn('sleep', ['37'], { stdio: 'ignore' });
    await once(child, 'spawn');
    expect(commandLineOf(child.pid!, via)).toBe('sleep 37');
    child.kill('SIGTERM');
    await once(child, 'exit');
    expect(commandLineOf(child.pid!, via)).toBeUndefined();
  });

  it('answers nothing for what cannot be a pid', () => {
    for (const pid of [0, -1, 1.5, Number.NaN]) expect(commandLineOf(pid, via)).toBeUndefined();
  });
});

describe('runs', () => {
  it('is true only for another process running the named program', async () => {
    const child = spawn('sleep', ['38'], { stdio: 'ignore' });
    await once(child, 'spawn');
    try {
      expect(runs(child.pid!, 'sleep')).toBe(true);
      expect(runs(child.pid!, 'DynamoDBLocal')).toBe(false); // a pid since reused by another program
      expect(runs(process.pid, 'node')).toBe(false); // this process's own record (tests start several services in one)
    } finally {
      child.kill('SIGTERM');
    }
  });
});
