// The conversation as the page keeps it: what the user sent, what the assistant
// answered (with its tool calls and time) or why it did not answer. Kept in
// sessionStorage per user, so leaving the page and coming back shows the same
// conversation the service still remembers (its history lives in memory there).
import { ApiProblem } from '../../api/client';

export type Turn =
  | { id: string; kind: 'user'; text: string; at: number }
  | { id: string; kind: 'assistant'; text: string; toolCalls: number; durationMs: number; at: number }
  | { id: string; kind: 'problem'; status: number; title: string; detail: string; retryAfter: number | null; at: number };

const KEY = (user: string) => `fleet-health.chat.${user}`;
const MAX_KEPT = 100;

export function loadTurns(user: string): Turn[] {
  try {
    const raw = sessionStorage.getItem(KEY(user));
    const turns = raw ? (JSON.parse(raw) as Turn[]) : [];
    return Array.isArray(turns) ? turns : [];
  } catch {
    return [];
  }
}

export function saveTurns(user: string, turns: Turn[]): void {
  try {
    if (turns.length) sessionStorage.setItem(KEY(user), JSON.stringify(turns.slice(-MAX_KEPT)));
    else sessionStorage.removeItem(KEY(user));
  } catch {
    // storage full or unavailable: the view still works, it just is not kept
  }
}

let counter = 0;
export const turnId = () => `${Date.now().toString(36)}-${(counter++).toString(36)}`;

/** Seconds from a Retry-After header (delta-seconds or an HTTP date); null when absent or unreadable. */
export function retryAfterSeconds(headers: Headers | undefined, now = Date.now()): number | null {
  const value = headers?.get('Retry-After')?.trim();
  if (!value) return null;
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/** A failed send as a turn of the conversation. */
export function problemTurn(error: unknown): Turn {
  const problem = error instanceof ApiProblem ? error : null;
  return {
    id: turnId(),
    kind: 'problem',
    status: problem?.status ?? 0,
    title: problem?.title ?? 'Something went wrong',
    detail: problem?.detail ?? (error instanceof Error ? error.message : String(error)),
    retryAfter: problem?.status === 429 ? retryAfterSeconds(problem.headers) : null,
    at: Date.now(),
  };
}

/** 1234 → "1.2 s", 64000 → "1 min 4 s", 800 → "0.8 s". */
export function seconds(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}
