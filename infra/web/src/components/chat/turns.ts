// The conversation as the page keeps it: what the user sent, what the assistant
// answered (with its tool calls and time) or why it did not answer. Kept in
// sessionStorage per user, so leaving the page and coming back shows the same
// conversation the service still remembers (its history lives in memory there).
// The page reads them through `useTurns` and changes them through `updateTurns`,
// which write sessionStorage at once: an answer arriving after the user left the
// page is kept, and shown when they come back.
import { useSyncExternalStore } from 'react';
import { ApiProblem } from '../../api/client';
import { seconds } from '../format';

export type Turn =
  | { id: string; kind: 'user'; text: string; at: number }
  | { id: string; kind: 'assistant'; text: string; toolCalls: number; durationMs: number; at: number }
  | { id: string; kind: 'problem'; status: number; title: string; detail: string; retryAfter: number | null; at: number; limit?: string };

const KEY = (user: string) => `fleet-health.chat.${user}`;
const MAX_KEPT = 100;

function storedText(user: string): string | null {
  try {
    return sessionStorage.getItem(KEY(user));
  } catch {
    return null;
  }
}

/** The turns a stored text holds; none when it is absent or unreadable. */
function parseTurns(raw: string | null): Turn[] {
  try {
    const turns = raw ? (JSON.parse(raw) as Turn[]) : [];
    return Array.isArray(turns) ? turns : [];
  } catch {
    return [];
  }
}

function saveTurns(user: string, turns: Turn[]): void {
  try {
    if (turns.length) sessionStorage.setItem(KEY(user), JSON.stringify(turns.slice(-MAX_KEPT)));
    else sessionStorage.removeItem(KEY(user));
  } catch {
    // storage full or unavailable: the view still works, it just is not kept
  }
}

const listeners = new Set<() => void>();
/** The turns last read or written, with the stored text they came from: the same text gives the same array (useSyncExternalStore needs that). */
const lastRead = new Map<string, { raw: string | null; turns: Turn[] }>();

function currentTurns(user: string): Turn[] {
  const raw = storedText(user);
  const last = lastRead.get(user);
  if (last && last.raw === raw) return last.turns;
  const turns = parseTurns(raw);
  lastRead.set(user, { raw, turns });
  return turns;
}

/** `user`'s conversation, re-rendered on every change (from this page or from an answer that arrives after it). */
export function useTurns(user: string): Turn[] {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => currentTurns(user),
  );
}

/** Changes `user`'s conversation and keeps it, whether or not the page is shown. */
export function updateTurns(user: string, change: (turns: Turn[]) => Turn[]): void {
  const next = change(currentTurns(user)).slice(-MAX_KEPT);
  saveTurns(user, next);
  // Shown as changed even when storage refused it (full): the view still works, it just is not kept.
  lastRead.set(user, { raw: storedText(user), turns: next });
  for (const listener of listeners) listener();
}

let counter = 0;
export const turnId = () => `${Date.now().toString(36)}-${(counter++).toString(36)}`;

/** A failed send as a turn of the conversation. */
export function problemTurn(error: unknown): Turn {
  const problem = error instanceof ApiProblem ? error : null;
  return {
    id: turnId(),
    kind: 'problem',
    status: problem?.status ?? 0,
    title: problem?.title ?? 'Something went wrong',
    detail: problem?.detail ?? (error instanceof Error ? error.message : String(error)),
    retryAfter: problem?.retryAfter ?? null,
    // Which limit a 429 names: the person's daily chat budget (`daily_budget`), one message at a time (`one_at_a_time`), else the per-minute one.
    ...(typeof problem?.body.limit === 'string' ? { limit: problem.body.limit } : {}),
    at: Date.now(),
  };
}

/** How long an answer took, as every AI page writes a duration (`seconds` of ../format.ts): 1234 → "1.2 s", 64000 → "1 min 4 s". */
export const answeredIn = (ms: number): string => seconds(ms / 1000);
