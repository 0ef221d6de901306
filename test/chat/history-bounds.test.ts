// The chat history is bounded by size, not only by count: earlier turns keep stubs of their
// long tool results, and the oldest whole turns go once HISTORY_CHARS is reached, so a
// tool call never loses its result (the strict fake refuses that, as OpenAI does).
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Principal } from '../../shared/auth/principal.js';
import { chat } from '../../shared/chat/assistant.js';
import { resetChat } from '../../shared/chat/conversations.js';
import { dropFleetDatabase } from '../../shared/chat/tools.js';
import { useFakeOpenAi, type WireMessage } from '../support/fake-openai.js';

const openai = useFakeOpenAi();
afterAll(async () => {
  await dropFleetDatabase();
});
beforeEach(() => {
  vi.stubEnv('LLM_PROVIDER', 'openai');
  vi.stubEnv('LLM_MODEL', 'gpt-4o-mini');
  vi.stubEnv('LLM_BASE_URL', openai().baseUrl);
});
afterEach(() => {
  vi.unstubAllEnvs();
});

/** HISTORY_CHARS (shared/chat/assistant.ts), as shared/chat/README.md states it. */
const HISTORY_CHARS = 100_000;
const user = (username: string, userId = `id-${username}`) => ({ userId, username, role: 'viewer' }) as unknown as Principal;
/** A query whose result is cut at the tools' 12,000 characters. */
const BIG_SQL = "SELECT printf('%.*c', 490, 'x') AS pad FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 200) SELECT x FROM c)";
/** The characters of a request's conversation (the history plus the new question), as the history counts them. */
const charsOf = (messages: WireMessage[]) =>
  messages
    .filter((m) => m.role !== 'system')
    .reduce((n, m) => n + (m.content?.length ?? 0) + (m.tool_calls ?? []).reduce((k, c) => k + c.function.name.length + c.function.arguments.length, 0), 0);

describe('chat history', () => {
  it('keeps stubs of earlier turns’ tool results, and the last turn’s in full', async () => {
    const u = user('history-stubs');
    try {
      for (let turn = 0; turn < 3; turn++) {
        // 7 results of 12,000 characters: one turn's fit in the budget, three turns' did not.
        openai().enqueueToolUse(Array.from({ length: 7 }, () => ({ name: 'run_sql', input: { sql: BIG_SQL } })));
        openai().enqueueText(`turn ${turn} done`);
        await chat(u, `question ${turn}`, Date.now() + turn);
      }
      openai().enqueueText('hi');
      await chat(u, 'hello again', Date.now() + 3);
    } finally {
      resetChat(u);
    }
    const last = openai().answered().at(-1)!.body.messages;
    const results = last.filter((m) => m.role === 'tool').map((m) => m.content ?? '');
    expect(results).toHaveLength(21);
    // Turns 1 and 2: stubs; turn 3 (the one before this question): the results as they were.
    expect(results.slice(0, 14).every((r) => r.length < 300 && r.includes('not kept in the history'))).toBe(true);
    expect(results.slice(14).every((r) => r.length > 12_000)).toBe(true);
    expect(charsOf(last)).toBeLessThanOrEqual(HISTORY_CHARS + 'hello again'.length);
  });

  it('drops the oldest whole turns once the history passes HISTORY_CHARS', async () => {
    const u = user('history-budget');
    const start = Date.now();
    const question = (i: number) => `${i}:${'q'.repeat(7_990)}`; // near the route's 8,000 characters
    try {
      for (let i = 0; i < 20; i++) {
        // Every fourth turn calls a tool, so turns differ in length and a cut in the middle would show.
        if (i % 4 === 3) openai().enqueueToolUse({ name: 'run_sql', input: { sql: 'SELECT 1 AS one' } });
        openai().enqueueText(`answer ${i}`);
        // A minute apart: the rate limit is not what this tests.
        await chat(u, question(i), start + i * 61_000);
      }
      openai().enqueueText('last');
      await chat(u, 'and so?', start + 20 * 61_000);
    } finally {
      resetChat(u);
    }
    const sent = openai().answered().at(-1)!.body.messages;
    expect(openai().received.every((r) => !r.rejected)).toBe(true); // every tool call went with its result
    const conversation = sent.filter((m) => m.role !== 'system');
    expect(conversation[0]).toMatchObject({ role: 'user' });
    expect(conversation[0]!.content).toMatch(/^\d+:q/); // a turn begins with its question
    expect(charsOf(sent)).toBeLessThanOrEqual(HISTORY_CHARS + 'and so?'.length);
    // Only what had to go went: the newest turns are all there, up to the budget.
    const questions = conversation.filter((m) => m.role === 'user' && /^\d+:q/.test(m.content ?? ''));
    const first = Number(questions[0]!.content!.split(':')[0]);
    expect(questions.map((m) => Number(m.content!.split(':')[0]))).toEqual(Array.from({ length: 20 - first }, (_, k) => first + k));
    expect(charsOf(sent)).toBeGreaterThan(HISTORY_CHARS - 2 * 8_100);
  });

  it('is the account’s, not the username’s: an account made again under a username (re-invited) starts afresh', async () => {
    const before = user('reused@example.com', 'account-1');
    const after = user('reused@example.com', 'account-2');
    const start = Date.now();
    try {
      openai().enqueueText('noted');
      await chat(before, 'my secret question', start);
      openai().enqueueText('hello');
      await chat(after, 'what did I ask before?', start + 61_000);
    } finally {
      resetChat(before);
      resetChat(after);
    }
    const sent = openai()
      .answered()
      .at(-1)!
      .body.messages.filter((m) => m.role !== 'system');
    expect(sent.map((m) => m.content)).toEqual(['what did I ask before?']);
  });

  it('adds a turn to the history as the turn ends: a reset while it was being answered stays a reset', async () => {
    const u = user('history-reset-race');
    try {
      openai().enqueueText('first answer');
      await chat(u, 'question 0');
      let answer = () => {};
      const held = new Promise<void>((resolve) => (answer = resolve));
      openai().enqueue({ kind: 'held', until: held, then: { kind: 'text', text: 'late answer' } });
      const late = chat(u, 'question 1');
      await vi.waitFor(() => expect(openai().received).toHaveLength(2), { timeout: 10_000 });
      // Cleared from another tab while question 1 is answered: question 0 is gone for good.
      resetChat(u);
      answer();
      await late;
      openai().enqueueText('third answer');
      await chat(u, 'question 2');
    } finally {
      resetChat(u);
    }
    const asked = openai()
      .answered()
      .at(-1)!
      .body.messages.filter((m) => m.role === 'user')
      .map((m) => m.content);
    expect(asked).toEqual(['question 1', 'question 2']);
  });
});
