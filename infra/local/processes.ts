// Whether a recorded pid still runs the program it was recorded for: a pid file outlives its process, and the pid
// may since belong to another program. Linux answers from /proc; where there is none (macOS) `ps` does. Before,
// there was no answer without /proc: a running service's folder was taken for a stale one, its emulator killed.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const HAS_PROC = existsSync('/proc/self/cmdline');

/** The command line `pid` runs (arguments joined by spaces), or undefined when no such process runs. */
export function commandLineOf(pid: number, via: 'proc' | 'ps' = HAS_PROC ? 'proc' : 'ps'): string | undefined {
  if (!(Number.isInteger(pid) && pid > 0)) return undefined;
  try {
    if (via === 'proc') return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    // `ps` exits 1 for a pid that is gone; without `ps` at all, nothing can be said either.
    return execFileSync('ps', ['-o', 'command=', '-p', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

/** Whether `pid` is another running process whose command line contains `name`. */
export const runs = (pid: number, name: string): boolean => pid !== process.pid && (commandLineOf(pid)?.includes(name) ?? false);
