// Structured JSON logs, one line per event, written by Powertools for AWS Lambda
// Logger. `service` is the function (route group or worker) whose invocation is
// in progress, `module` the code that wrote the line (the name given to
// createLogger); outside an invocation (module load, the local runtime's own
// lines) `service` is the module too. Every line written during an invocation,
// by any module, carries its request_id, correlation_id, cold_start and Lambda
// context: they are kept per asynchronous context (AsyncLocalStorage), so
// concurrent invocations in one process (npm start) never mix them.
// Callers pass facts, never secrets: headers and bodies are not logged.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { LogFormatter, LogItem, Logger as Powertools } from '@aws-lambda-powertools/logger';
import type { ConstructorOptions } from '@aws-lambda-powertools/logger/types';
import type { Context } from 'aws-lambda';
import { coreSettings } from './config/core.js';
import { withTableAccess } from './db/access.js';
import { WORKERS, type WorkerName } from './workers.js';

/** The invocation in progress: what every line written during it carries. */
export interface LogContext {
  /** The function: a route group or worker name. */
  readonly service: string;
  /** API Gateway's request id for a request; the Lambda request id (or a generated one) for a worker run. */
  readonly request_id: string;
  /** The caller's `x-correlation-id`, or the invoking request's correlation id passed in a worker's event, else the request id. */
  readonly correlation_id: string;
  /** The first invocation of this function in this process. */
  readonly cold_start: boolean;
  readonly function_name?: string;
  readonly function_request_id?: string;
  readonly function_arn?: string;
  readonly function_memory_size?: string;
}

/** What a log line takes from the Lambda context. */
export type LambdaContextFields = Partial<Pick<Context, 'awsRequestId' | 'functionName' | 'invokedFunctionArn' | 'memoryLimitInMB'>>;

export interface InvocationStart {
  /** The function: a route group or worker name. */
  service: string;
  /** The Lambda context, when there is one (Lambda, the local runtime). */
  context?: LambdaContextFields | undefined;
  /** Defaults to the Lambda request id, else a generated one. */
  requestId?: string | undefined;
  /** Any value: used when it is a valid correlation id (validCorrelationId), else the request id is. */
  correlationId?: unknown;
}

const invocations = new AsyncLocalStorage<LogContext>();
const started = new Set<string>();

/** At most 128 characters of letters, digits and `._:-`: safe to log and to echo as a header. */
const CORRELATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The value when it is a well-formed correlation id (bounded, no spaces or control characters), else undefined. */
export function validCorrelationId(value: unknown): string | undefined {
  return typeof value === 'string' && CORRELATION_ID.test(value) ? value : undefined;
}

/** Runs `run` as one invocation: every line logged during it, by any module, carries its context. */
export function withInvocation<T>(start: InvocationStart, run: () => T): T {
  const { context } = start;
  const requestId = start.requestId ?? context?.awsRequestId ?? randomUUID();
  const functionKey = context?.functionName ?? start.service;
  const cold = !started.has(functionKey);
  started.add(functionKey);
  const store: LogContext = {
    service: start.service,
    request_id: requestId,
    correlation_id: validCorrelationId(start.correlationId) ?? requestId,
    cold_start: cold,
    function_name: context?.functionName,
    function_request_id: context?.awsRequestId,
    function_arn: context?.invokedFunctionArn,
    function_memory_size: context?.memoryLimitInMB === undefined ? undefined : String(context.memoryLimitInMB),
  };
  return invocations.run(store, run);
}

/** The invocation in progress in this asynchronous context, if any. */
export function logContext(): LogContext | undefined {
  return invocations.getStore();
}

/**
 * A worker's handler run as one invocation. Its correlation id is the event's
 * `correlation_id` (the invoking request's, passed by invokeWorker), else the
 * value `runIdOf` picks from the event (patrol: its report id), else the run's
 * request id.
 */
export function workerHandler<C extends object, R>(
  service: WorkerName,
  handler: (event: unknown, context?: C) => Promise<R>,
  runIdOf: (event: Record<string, unknown>) => unknown = () => undefined,
): (event?: unknown, context?: C & LambdaContextFields) => Promise<R> {
  return (event, context) => {
    const fields = event !== null && typeof event === 'object' ? (event as Record<string, unknown>) : {};
    const correlationId = validCorrelationId(fields.correlation_id) ?? validCorrelationId(runIdOf(fields));
    // Its DynamoDB requests may reach only the worker's declared tables, as on AWS (shared/db/access.ts).
    return withTableAccess(service, WORKERS[service], () => withInvocation({ service, context, correlationId }, () => handler(event, context)));
  };
}

/** A line Powertools prints as given: `null` fields stay (recompute's `issues: null` says the pass failed). */
class Line extends LogItem {
  override prepareForPrint(): void {}
}

/**
 * Powertools' standard keys (level in lower case, as before), then the
 * invocation's context, then the caller's fields, which cannot override them.
 */
class ContextFormatter extends LogFormatter {
  override formatAttributes(...[attributes, { module = 'powertools', ...fields }]: Parameters<LogFormatter['formatAttributes']>): LogItem {
    const run = invocations.getStore();
    const line: Record<string, unknown> = {
      level: attributes.logLevel.toLowerCase(),
      message: attributes.message,
      timestamp: this.formatTimestamp(attributes.timestamp),
      service: run?.service ?? module,
      module,
      cold_start: run?.cold_start,
      function_name: run?.function_name,
      function_request_id: run?.function_request_id,
      function_arn: run?.function_arn,
      function_memory_size: run?.function_memory_size,
      request_id: run?.request_id,
      correlation_id: run?.correlation_id,
      xray_trace_id: attributes.xRayTraceId,
      sampling_rate: attributes.sampleRateValue || undefined,
    };
    for (const key of Object.keys(line)) if (line[key] === undefined) delete line[key];
    for (const [key, value] of Object.entries(fields)) if (!(key in line) && value !== undefined) line[key] = value;
    return new Line({ attributes: line });
  }
}

const formatter = new ContextFormatter();
/** One Powertools logger per level in use (normally one per process): every module writes through it. */
const byLevel = new Map<string, Powertools>();

/**
 * A module's logger. The level is read when it is created: LOG_LEVEL (debug,
 * info, warn, error, silent; default info; shared/config/core.ts), handed to
 * Powertools, which upper-cases it (its own reading of LOG_LEVEL /
 * POWERTOOLS_LOG_LEVEL accepts upper case only) and lets Lambda's
 * AWS_LAMBDA_LOG_LEVEL override it.
 */
export function createLogger(module: string) {
  const level = coreSettings().logLevel;
  let logger = byLevel.get(level);
  if (!logger) byLevel.set(level, (logger = new Powertools({ logLevel: level as ConstructorOptions['logLevel'], logFormatter: formatter })));
  const tag = { module };
  return {
    debug: (m: string, f?: Record<string, unknown>) => logger.debug(m, tag, f ?? {}),
    info: (m: string, f?: Record<string, unknown>) => logger.info(m, tag, f ?? {}),
    warn: (m: string, f?: Record<string, unknown>) => logger.warn(m, tag, f ?? {}),
    error: (m: string, f?: Record<string, unknown>) => logger.error(m, tag, f ?? {}),
  };
}
export type Logger = ReturnType<typeof createLogger>;

/** What may be logged of an error: name and message, plus the stack for 5xx diagnosis. */
export function errorFields(error: unknown): Record<string, unknown> {
  if (error instanceof Error) return { error: error.name, error_message: error.message, stack: error.stack };
  return { error: String(error) };
}
