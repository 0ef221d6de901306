// A child process's own peak RSS, for the memory suites' children. Not `process.resourceUsage().maxRSS`:
// Linux folds the address space a process was forked with into it at exec, so a child of the bench process
// reported the parent's RSS whenever the parent was the larger (792 MB for every child once the metrics
// puller's suite had grown the bench to that). VmHWM is the high-water mark of the child's own memory.
import { readFileSync } from 'node:fs';

/** The peak resident set of this process since its exec, in KB. */
export function peakRssKb(): number {
  const status = readFileSync('/proc/self/status', 'utf8');
  const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(status);
  if (!hwm) throw new Error('/proc/self/status has no VmHWM line: the memory suites need Linux');
  return Number(hwm[1]);
}
