import * as z from '../zod.js';
import { ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { RUN_SQL_MEMORY_MB } from '../function-memory.js';

export const ChatMessageBody = z.lazy(() => z.strictObject({ message: z.string().check(z.trim(), z.minLength(1), z.maxLength(8000)) }));

export const ChatMessageResponse = z.lazy(() => z.object({ reply: z.string(), tool_calls: z.int().check(z.gte(0)), duration_ms: z.int().check(z.gte(0)) }));
export const ChatResetResponse = z.lazy(() => z.object({ status: z.literal('ok'), message: z.string() }));
/** Whether a message can be answered now: the model that would answer, or what to set (the 503's detail). */
export const ChatStatusResponse = z.lazy(() =>
  z.union([
    z.object({ available: z.literal(true), model: z.string(), detail: z.null() }),
    z.object({ available: z.literal(false), model: z.null(), detail: z.string() }),
  ]),
);

export type ChatStatus = z.output<typeof ChatStatusResponse>;

/** A message is answered within this (the chat Lambda has 29 s); the last model call starts with at least 10 s left. */
export const CHAT_DEADLINE_MS = 27_000;

export const chatGroup = defineGroup({
  name: 'chat',
  config: ['llm', 'llm-pricing'],
  tables: {
    users: 'read',
    clusters: 'read',
    metrics: 'read',
    alerts: 'read',
    logs: 'read',
    scores: 'read',
    issues: 'read',
    rules: 'read',
    'llm-usage': 'readputupdate',
  },
  grants: ['bedrock:invoke'],
  // run_sql's snapshot of the fleet (shared/function-memory.ts says what it measured).
  memoryMb: RUN_SQL_MEMORY_MB,
  // A message runs up to its deadline by design: its duration alarm is for runs past it.
  runsUpToMs: CHAT_DEADLINE_MS,
  routes: {
    message: {
      method: 'POST',
      path: '/api/chat/message',
      summary: 'Ask the assistant',
      auth: 'user',
      roles: ANY_ROLE,
      body: ChatMessageBody,
      // 502: the language model failed.
      problems: [429, 502, 503],
      response: ChatMessageResponse,
    },
    reset: { method: 'POST', path: '/api/chat/reset', summary: "Clear the caller's conversation", auth: 'user', roles: ANY_ROLE, response: ChatResetResponse },
    // Beyond the contract: the page says the assistant cannot answer before anyone types a question.
    status: {
      method: 'GET',
      path: '/api/chat/status',
      summary: 'Whether the assistant can answer: its model, or which settings to set',
      auth: 'user',
      roles: ANY_ROLE,
      response: ChatStatusResponse,
    },
  },
});
