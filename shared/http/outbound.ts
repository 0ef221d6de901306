// Helpers for the calls this service makes to others (tickets, BI server, LLM,
// Prometheus): what a failed call may tell the user, an answer read only up to
// what its caller takes, and a body read as JSON when it is JSON.
import { parseJsonText } from '../text.js';

/** A timeout as the user reads it: seconds to one decimal ("0.3 s", "20 s"). */
export const secondsText = (ms: number): string => `${Math.round(ms / 100) / 10} s`;

/** How long a call may take: its own limit, or less when the caller's deadline (epoch ms) comes sooner; at least 1 ms. */
export const timeoutBefore = (deadline: number, limitMs: number): number => Math.max(1, Math.min(limitMs, Math.floor(deadline - Date.now())));

/**
 * Retry-After (seconds or an HTTP date) or the `retry-after-ms` some
 * OpenAI-compatible servers send; undefined when absent or unreadable.
 */
export function retryAfterMs(header: (name: string) => string | undefined): number | undefined {
  const ms = Number(header('retry-after-ms'));
  if (header('retry-after-ms') && Number.isFinite(ms) && ms >= 0) return ms;
  const value = header('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** When a rate-limited caller may try again, as a 429's Retry-After says it ("try again in 37 s"), for the user's message. */
export function tryAgainIn(headers: Headers): string {
  const wait = retryAfterMs((name) => headers.get(name) ?? undefined);
  return wait === undefined ? 'try again in a minute' : `try again in ${secondsText(Math.max(1000, Math.ceil(wait / 1000) * 1000))}`;
}

/** Only the kind of failure: fetch's own messages may name more than the user needs. */
export function failureReason(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && error.name === 'TimeoutError') return `no answer within ${secondsText(timeoutMs)}`;
  return connectionFailure(error);
}

/**
 * A failed connection as a user reads it: its error code (fetch's `cause.code`, or a client's own `code`) when it
 * looks like one (ECONNREFUSED, UND_ERR_SOCKET), nothing else of the message, which may carry more than they need.
 */
export function connectionFailure(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code) ? `connection failed (${code})` : 'connection failed';
}

/**
 * The body as JSON, or undefined when it is not JSON (providers' error pages are often HTML). A lone
 * surrogate it escapes becomes U+FFFD, as in a request's body: a model's text is stored (shared/http/README.md).
 */
export function parseJson(text: string): unknown {
  try {
    return parseJsonText(text);
  } catch {
    return undefined;
  }
}

/** An answer longer than its caller takes: refused without reading the rest. */
export class AnswerTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`more than ${maxBytes >= 1 << 20 ? `${maxBytes / (1 << 20)} MB` : `${maxBytes / 1024} KB`}`);
    this.name = 'AnswerTooLarge';
  }
}

/**
 * The body as text, refused past `maxBytes` (declared, or counted while reading) with
 * AnswerTooLarge: a server answering far more than its API ever does would otherwise fill
 * the Lambda's memory. Anything else that ends the read (a reset, the call's timeout) is
 * thrown as it comes.
 */
export async function boundedText(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new AnswerTooLarge(maxBytes);
  }
  if (!response.body) return '';
  return new TextDecoder().decode(await boundedBytes(response.body as unknown as AsyncIterable<Uint8Array>, maxBytes));
}

/**
 * Every byte of a body (a Node stream or a web one), refused with AnswerTooLarge once it
 * passes `maxBytes`: leaving the loop destroys a Node stream and cancels a web one, so
 * the rest is never read and memory holds at most `maxBytes` and a chunk.
 */
export async function boundedBytes(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.byteLength;
    if (bytes > maxBytes) throw new AnswerTooLarge(maxBytes);
    parts.push(chunk);
  }
  const whole = new Uint8Array(bytes);
  let at = 0;
  for (const part of parts) {
    whole.set(part, at);
    at += part.byteLength;
  }
  return whole;
}
