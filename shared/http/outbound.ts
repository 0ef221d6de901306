// Helpers for the calls this service makes to others (tickets, BI server, LLM):
// what a failed call may tell the user, and a body read as JSON when it is JSON.

/** Only the kind of failure: fetch's own messages may name more than the user needs. */
export function failureReason(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && error.name === 'TimeoutError') return `no answer within ${timeoutMs / 1000} s`;
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return typeof code === 'string' ? `connection failed (${code})` : 'connection failed';
}

/** The body as JSON, or undefined when it is not JSON (providers' error pages are often HTML). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
