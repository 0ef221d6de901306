// Captures the JSON log lines a test's code writes (stdout and stderr), so a test
// can assert what was logged; the capture is stopped after each test.
import { afterEach, vi } from 'vitest';

export type LogLine = Record<string, unknown>;

export interface LogCapture {
  stop(): LogLine[];
}

let active: LogCapture | undefined;
afterEach(() => {
  active?.stop();
  active = undefined;
});

/** Captures every JSON line written to stdout and stderr until `stop()` (or the end of the test). */
export function captureLogLines(): LogCapture {
  const chunks: string[] = [];
  const keep = (chunk: string | Uint8Array) => chunks.push(String(chunk)) > 0;
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(keep);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(keep);
  active = {
    stop(): LogLine[] {
      out.mockRestore();
      err.mockRestore();
      return chunks
        .join('')
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as LogLine);
    },
  };
  return active;
}
