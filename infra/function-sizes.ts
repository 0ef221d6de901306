// Memory and timeout of every Lambda: its declaration's (a worker in
// shared/workers.ts, a route group in shared/routes/) or the defaults below.
// The stack deploys these, the local runtime gives them to each invocation's
// context, and the stack test and the memory bench check against them.
import { ROUTE_GROUPS } from '../shared/routes/all-groups.js';
import { WORKERS, type WorkerDeclaration, type WorkerName } from '../shared/workers.js';

/** Memory of a route group or worker that declares no `memoryMb` of its own. */
export const GROUP_MEMORY_MB = 512;
export const WORKER_MEMORY_MB = 1024;
/** API Gateway's HTTP API integration limit is 30 s and cannot be raised: route groups answer (or fail) inside it. */
export const GROUP_TIMEOUT_SECONDS = 29;

export interface FunctionSize {
  memoryMb: number;
  timeoutSeconds: number;
}

/** A declared function's size; undefined for a name no route group or worker has. */
export function functionSize(name: string): FunctionSize | undefined {
  if (Object.hasOwn(WORKERS, name)) {
    const worker = WORKERS[name as WorkerName] as WorkerDeclaration;
    return { memoryMb: worker.memoryMb ?? WORKER_MEMORY_MB, timeoutSeconds: worker.timeoutSeconds };
  }
  const group = ROUTE_GROUPS.find((g) => g.name === name);
  return group && { memoryMb: group.memoryMb ?? GROUP_MEMORY_MB, timeoutSeconds: GROUP_TIMEOUT_SECONDS };
}
