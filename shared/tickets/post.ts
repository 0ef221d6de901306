// The one HTTP call of every ticket provider: POST JSON, read the answer within the timeout.
import { AnswerTooLarge, boundedText, failureReason, timeoutBefore, tryAgainIn } from '../http/outbound.js';
import { TicketProviderError } from './types.js';

/** The most a ticket provider's answer may hold: an issue key and a URL, or an error page, take a few KB. */
const TICKET_ANSWER_MAX_BYTES = 1024 * 1024;

/**
 * POSTs JSON and reads the whole answer (at most 1 MB) within the timeout; no retries (see
 * provider.ts). Redirects are not followed: a POST must not wander off with the credentials, and
 * a 3xx points at a wrong URL. A failure is a TicketProviderError naming `provider` ("Jira").
 * The call ends by `deadline` (epoch ms) when that comes sooner than `limitMs`, and is not made
 * with under MIN_TICKET_CALL_MS left.
 */
export async function postJson(
  provider: string,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  limitMs: number,
  deadline = Number.POSITIVE_INFINITY,
): Promise<{ status: number; text: string; headers: Headers }> {
  const timeoutMs = callTimeout(provider, deadline, limitMs);
  const sent = headersOf(provider, headers);
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: sent,
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: response.status, text: await boundedText(response, TICKET_ANSWER_MAX_BYTES), headers: response.headers };
  } catch (error) {
    if (error instanceof AnswerTooLarge) throw new TicketProviderError(`${provider} answered with ${error.message}`, undefined, true);
    throw new TicketProviderError(`${provider} did not answer: ${failureReason(error, timeoutMs)}`, undefined, !neverSent(error));
  }
}

/**
 * The request's headers, built before anything is sent: a value HTTP cannot carry (a token setting with a line
 * break) fails here, as not sent, where inside fetch it read as "did not answer", so as a ticket that may exist.
 * The value is not named: it is a credential.
 */
function headersOf(provider: string, headers: Record<string, string>): Headers {
  try {
    return new Headers(headers);
  } catch {
    throw new TicketProviderError(`${provider} was not asked: a request header holds characters HTTP cannot carry (check the token setting)`, undefined, false);
  }
}

/**
 * A 429: the provider's rate limit refused the request before it did anything (no ticket), and its Retry-After says
 * when it takes one again; the user is told that, where "answered HTTP 429" told them neither.
 */
export function rateLimited(provider: string, headers: Headers): TicketProviderError {
  return new TicketProviderError(`${provider} is limiting the rate of requests (HTTP 429): ${tryAgainIn(headers)}`, 429);
}

/** Less time than this left before the caller's deadline, a call is not made: it could only time out after sending. */
export const MIN_TICKET_CALL_MS = 1_000;

/**
 * How long the call may take: TICKET_TIMEOUT_MS, or less when the caller's deadline (epoch ms) comes sooner.
 * With under MIN_TICKET_CALL_MS left it is not sent at all: a TicketProviderError that says nothing was created.
 */
function callTimeout(provider: string, deadline: number, timeoutMs: number): number {
  if (deadline - Date.now() < MIN_TICKET_CALL_MS)
    throw new TicketProviderError(`${provider} was not asked: the request had used its time before the call (the route answers within 29 s)`, undefined, false);
  return timeoutBefore(deadline, timeoutMs);
}

/** Failures that leave no request at the provider: no address, no connection, no trusted TLS session. */
const NOT_SENT = /^(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ERR_TLS_CERT_ALTNAME_INVALID|(UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|CERT_).*)$/;
function neverSent(error: unknown): boolean {
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return typeof code === 'string' && NOT_SENT.test(code);
}
