// Memory (with its V8 options) and timeout of every Lambda: its declaration's (a worker in
// shared/workers.ts, a route group in shared/routes/), the deploy steps' below, or the defaults.
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
  /** NODE_OPTIONS of its own (a worker's `nodeOptions`); undefined: every Lambda's (LAMBDA_NODE_OPTIONS, infra/bundling.ts). */
  nodeOptions?: string;
  /** How long a request may run by design, past 90% of the timeout (a route group's `runsUpToMs`). */
  runsUpToMs?: number;
}

/**
 * Functions CloudFormation runs during a deployment (custom resources), not the API or a schedule.
 * bootstrap hashes one password: scrypt takes 128 MB of it (shared/auth/passwords.ts) and, at 512 MB's
 * share of a CPU, about a second; the rest of the minute is the secret's and DynamoDB's retries.
 */
export const DEPLOY_FUNCTIONS: Readonly<Record<'bootstrap', FunctionSize>> = { bootstrap: { memoryMb: 512, timeoutSeconds: 60 } };

/** A declared function's size; undefined for a name no route group, worker or deploy step has. */
export function functionSize(name: string): FunctionSize | undefined {
  if (Object.hasOwn(DEPLOY_FUNCTIONS, name)) return DEPLOY_FUNCTIONS[name as keyof typeof DEPLOY_FUNCTIONS];
  if (Object.hasOwn(WORKERS, name)) {
    const worker = WORKERS[name as WorkerName] as WorkerDeclaration;
    return { memoryMb: worker.memoryMb ?? WORKER_MEMORY_MB, timeoutSeconds: worker.timeoutSeconds, nodeOptions: worker.nodeOptions };
  }
  const group = ROUTE_GROUPS.find((g) => g.name === name);
  return group && { memoryMb: group.memoryMb ?? GROUP_MEMORY_MB, timeoutSeconds: GROUP_TIMEOUT_SECONDS, runsUpToMs: group.runsUpToMs };
}
