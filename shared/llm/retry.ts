// Retries for LLM calls (both providers): exponential backoff with jitter on
// throttling, timeouts, 5xx and network failures; never on other 4xx, which
// would fail the same way again. Each attempt gets its own timeout through an
// AbortSignal. The Bedrock client runs with the SDK's own retries off
// (maxAttempts: 1), so these are the only ones.
import { connectionFailure, secondsText, timeoutBefore } from '../http/outbound.js';
import { LlmError, type LlmErrorKind, type TokenUsage } from './types.js';

export interface RetryPolicy {
  /** Attempts in all, including the first (LLM_MAX_ATTEMPTS, default 4). */
  maxAttempts: number;
  /** How long one attempt may take (LLM_TIMEOUT_MS, default 60000). */
  timeoutMs: number;
  /** First backoff step; doubles per retry (LLM_RETRY_BASE_MS, default 500). */
  baseDelayMs: number;
  /** Upper bound of one wait, Retry-After included (default 20000). */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 4, timeoutMs: 60_000, baseDelayMs: 500, maxDelayMs: 20_000 };

/**
 * A failed attempt, as the provider classified it. `retryable` defaults to the
 * kind (throttled, timeout and unavailable are transient); `retryAfterMs` is
 * the server's Retry-After, when it sent one.
 */
export class AttemptFailed extends LlmError {
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, kind: LlmErrorKind, status?: number, options: { retryable?: boolean; retryAfterMs?: number; paid?: TokenUsage } = {}) {
    super(message, kind, status, options.paid);
    this.retryable = options.retryable ?? TRANSIENT.has(kind);
    this.retryAfterMs = options.retryAfterMs;
  }
}

const TRANSIENT = new Set<LlmErrorKind>(['throttled', 'timeout', 'unavailable']);

/**
 * Runs `attempt` until it succeeds, fails for good, or the attempts run out.
 * `attempt` gets an AbortSignal that fires after `timeoutMs`; whatever it
 * throws once that signal fired counts as a timeout. Errors that are not
 * LlmErrors are treated as network failures. The error thrown at the end is a
 * plain LlmError saying how many attempts were made.
 */
export async function withRetries<T>(policy: RetryPolicy, label: string, attempt: (signal: AbortSignal) => Promise<T>, deadline = Infinity): Promise<T> {
  for (let n = 1; ; n += 1) {
    const timeoutMs = timeoutBefore(deadline, policy.timeoutMs);
    const signal = AbortSignal.timeout(timeoutMs);
    let failure: AttemptFailed;
    try {
      return await attempt(signal);
    } catch (error) {
      failure = classify(error, signal, timeoutMs, label);
    }
    const wait = failure.retryable && n < policy.maxAttempts ? backoffMs(n, policy, failure.retryAfterMs) : undefined;
    if (wait === undefined || Date.now() + wait >= deadline) {
      const tries = n > 1 ? ` (gave up after ${n} attempts)` : wait === undefined ? '' : ' (no time left to try again)';
      throw new LlmError(`${failure.message}${tries}`, failure.kind, failure.status, failure.paid);
    }
    // The global timer, not node:timers/promises: the provider tests read the waits off it (test/llm/*.test.ts scheduledWaits).
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

function classify(error: unknown, signal: AbortSignal, timeoutMs: number, label: string): AttemptFailed {
  // Our own timeout fired: whatever the client threw (AbortError, a cancelled stream) is a timeout.
  if (signal.aborted) return new AttemptFailed(`${label} did not answer within ${secondsText(timeoutMs)}`, 'timeout');
  if (error instanceof AttemptFailed) return error;
  if (error instanceof LlmError) return new AttemptFailed(error.message, error.kind, error.status, { paid: error.paid });
  return new AttemptFailed(`${label} could not be reached: ${connectionFailure(error)}`, 'unavailable');
}

/**
 * The wait before attempt n+1: the server's Retry-After when given, else
 * base·2^(n-1) with "equal jitter" (half fixed, half random) so that many
 * throttled Lambdas do not retry in lockstep. Both capped by maxDelayMs.
 */
export function backoffMs(n: number, policy: RetryPolicy, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxDelayMs);
  const step = Math.min(policy.baseDelayMs * 2 ** (n - 1), policy.maxDelayMs);
  return step / 2 + Math.random() * (step / 2);
}
