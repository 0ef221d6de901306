// The Lambda functions of the stack, run in this process: the route groups
// (shared/routes) and the workers (shared/workers.ts), loaded from the same
// `functions/` entries esbuild bundles, each given a Lambda context with its
// deployed timeout. The local server, the local schedules and `npm run invoke`
// all call them through here.
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { concernsOf, type ConfigConcern } from '../../shared/config/concerns.js';
import { ROUTE_GROUPS } from '../../shared/routes/all-groups.js';
import { WORKERS, type WorkerDeclaration, type WorkerName } from '../../shared/workers.js';
import { functionSize, type FunctionSize } from '../function-sizes.js';

export type LambdaHandler = (event: unknown, context: Context) => Promise<unknown>;

/** Every function the stack deploys, from the declarations: the route groups, then the workers (bundling.ts builds the same set from functions/). */
export function declaredFunctions(): string[] {
  return functionConcerns().map((f) => f.name);
}

/** Each function with the configuration concerns it reads: its declared ones plus the implied (shared/config/concerns.ts). */
export function functionConcerns(): { name: string; concerns: ConfigConcern[] }[] {
  return [
    ...ROUTE_GROUPS.map((g) => ({ name: g.name, concerns: concernsOf('route-group', g.config, g.grants) })),
    ...Object.entries(WORKERS as Record<WorkerName, WorkerDeclaration>).map(([name, w]) => ({ name, concerns: concernsOf('worker', w.config, w.grants) })),
  ];
}

/** A function's size as the stack deploys it; unknown names are refused. */
function sizeOf(name: string): FunctionSize {
  const size = functionSize(name);
  if (!size) throw new Error(`no function named ${name}; the functions are: ${declaredFunctions().join(', ')}`);
  return size;
}

/** Imports a function's handler (after the environment is set up: handlers read it at import). */
export async function loadHandler(name: string): Promise<LambdaHandler> {
  sizeOf(name); // refuses unknown names before any import
  const module = (await import(`../../functions/${name}.ts`)) as { handler: LambdaHandler };
  return module.handler;
}

/** A Lambda context for one invocation, whose remaining time counts down from the deployed timeout. */
export function lambdaContext(name: string, requestId: string = randomUUID()): Context {
  const { memoryMb, timeoutSeconds } = sizeOf(name);
  const deadline = Date.now() + timeoutSeconds * 1000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `fleet-health-local-${name}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:fleet-health-local-${name}`,
    memoryLimitInMB: String(memoryMb),
    awsRequestId: requestId,
    logGroupName: `/local/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Invokes a function once, as `aws lambda invoke` would (RequestResponse). */
export async function invokeLocal(name: string, event: unknown): Promise<unknown> {
  const handler = await loadHandler(name);
  return handler(event, lambdaContext(name));
}

/**
 * Registers the workers that route groups and workers start (the patrol trigger the patrol worker, recompute the
 * agent worker, "Pull now" the metrics puller, the refresh and recompute routes recompute) to run in this process,
 * as Lambda would run them asynchronously (shared/worker-invoke.ts).
 */
export async function registerLocalWorkers(): Promise<void> {
  const { registerLocalWorker, WORKER_FUNCTION_ENV } = await import('../../shared/worker-invoke.js');
  for (const name of Object.keys(WORKER_FUNCTION_ENV) as (keyof typeof WORKER_FUNCTION_ENV)[]) {
    const handler = await loadHandler(name);
    registerLocalWorker(name, (event) => handler(event, lambdaContext(name)));
  }
}
