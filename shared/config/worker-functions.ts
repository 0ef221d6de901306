// The functions a route group or worker starts asynchronously (shared/worker-invoke.ts):
// set by the stack on the functions granted `invoke:<worker>`.
import * as z from '../zod.js';
import { defineSettings } from './env.js';

/** The variable naming each asynchronously invoked worker's function (the stack sets it on the functions granted `invoke:<worker>`). */
export const WORKER_FUNCTION_ENV = {
  'patrol-worker': 'PATROL_WORKER_FUNCTION',
  'agent-worker': 'AGENT_WORKER_FUNCTION',
  'metrics-puller': 'METRICS_PULLER_FUNCTION',
  recompute: 'RECOMPUTE_FUNCTION',
} as const;
export type InvocableWorker = keyof typeof WORKER_FUNCTION_ENV;

const functionName = z.optional(z.string().check(z.regex(/^[A-Za-z0-9_:.-]{1,170}$/, { error: 'must be a Lambda function name or ARN' })));

/** Unset locally: the local runtime runs workers in-process. */
export const workerFunctionSettings = defineSettings('worker-functions', () => ({
  PATROL_WORKER_FUNCTION: functionName,
  AGENT_WORKER_FUNCTION: functionName,
  METRICS_PULLER_FUNCTION: functionName,
  RECOMPUTE_FUNCTION: functionName,
}));
