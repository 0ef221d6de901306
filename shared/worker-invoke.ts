// Starting a background worker without waiting for it: on AWS an asynchronous
// Lambda invocation (InvocationType Event) of the function the stack names in
// <WORKER>_FUNCTION; locally (npm start, tests) the handler the local runtime
// registered, run in this process on the next tick. `startAndWait` starts work
// and follows it a while (the refresh routes, the patrol trigger).
// The Lambda client is in lambda-invoke.ts, loaded on the first start on AWS.
import { setTimeout as sleep } from 'node:timers/promises';
import { type InvocableWorker, WORKER_FUNCTION_ENV, workerFunctionSettings } from './config/worker-functions.js';
import { ServiceUnavailable } from './http/errors.js';
import { createLogger, errorFields, logContext } from './log.js';

type LocalHandler = (event: unknown) => Promise<unknown>;
const local = new Map<InvocableWorker, LocalHandler>();
const inFlight = new Set<Promise<unknown>>();

export { WORKER_FUNCTION_ENV, type InvocableWorker } from './config/worker-functions.js';

/** The local runtime runs workers in-process: it registers their handlers here. */
export function registerLocalWorker(name: InvocableWorker, handler: LocalHandler): void {
  local.set(name, handler);
}

export async function invokeWorker(name: InvocableWorker, event: Record<string, unknown>): Promise<void> {
  // The run's log lines carry the correlation id of the request (or run) that starts it (shared/log.ts).
  const correlationId = logContext()?.correlation_id;
  if (correlationId && event.correlation_id === undefined) event = { ...event, correlation_id: correlationId };
  const functionName = workerFunctionSettings()[WORKER_FUNCTION_ENV[name]];
  if (functionName) {
    const { invokeAsync } = await import('./lambda-invoke.js');
    // Throttled, denied, a function gone since the deploy, or no 202: the caller answers 503 (its own
    // clean-up runs: the run is marked failed, the lock released), the cause goes to the log.
    const refused = await invokeAsync(functionName, event).then(
      (status) => (status === 202 ? undefined : { status }),
      (error: unknown) => errorFields(error),
    );
    if (refused) {
      createLogger('worker-invoke').error('worker could not be started', { worker: name, ...refused });
      throw new ServiceUnavailable(`The ${name} worker could not be started; try again shortly.`);
    }
    return;
  }
  const handler = local.get(name);
  if (!handler) throw new Error(`${WORKER_FUNCTION_ENV[name]} is not set and no local ${name} is registered`);
  const run = new Promise<void>((r) => setImmediate(r))
    .then(() => handler(event))
    // As Lambda's runtime would, in the log: a failed run (a scan, tasks failed for good, a DynamoDB error) is never silent.
    .catch((error: unknown) => createLogger('worker-invoke').error('local worker run failed', { worker: name, ...errorFields(error) }))
    .finally(() => inFlight.delete(run));
  inFlight.add(run);
}

/** Resolves when every worker started in this process has finished (a CLI waits for them before it exits). */
export async function localWorkersSettled(): Promise<void> {
  while (inFlight.size) await Promise.all(inFlight);
}

/** How `startAndWait` starts work and follows it. */
export interface StartAndWait<S> {
  /** Starts the work (e.g. records a run and invokes its worker); a failure is thrown before any wait. */
  start: () => Promise<void>;
  /** Where the work stands; undefined while there is nothing to read yet. */
  poll: () => Promise<S | undefined>;
  /** Whether a state polled ends the wait (done or failed). */
  done: (state: S) => boolean;
  /** How long to wait; 0 answers at once without polling. */
  waitMs: number;
  /** Between polls. */
  intervalMs: number;
}

/** Starts work, then polls it until `done` or `waitMs` has passed: the last state polled (undefined when none was). */
export async function startAndWait<S>({ start, poll, done, waitMs, intervalMs }: StartAndWait<S>): Promise<S | undefined> {
  await start();
  if (waitMs <= 0) return undefined;
  const deadline = Date.now() + waitMs;
  for (;;) {
    const state = await poll();
    if (state !== undefined && done(state)) return state;
    if (Date.now() >= deadline) return state;
    await sleep(intervalMs);
  }
}
