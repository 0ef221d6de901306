// Model calls outside the tool loop end by a deadline too: structuredAnswer's repair call (the
// patrol's and the agent's) and AI grouping's call. Counted where possible: a call past its
// deadline is not retried, so the fake sees one request, not the four of a retrying client.
import { describe, expect, it, vi } from 'vitest';
import { llmGroups } from '../../shared/ai-issues/grouping.js';
import type { AlertRecord } from '../../shared/db/alerts.js';
import { llmProvider } from '../../shared/llm/provider.js';
import { AnswerInvalid, structuredAnswer } from '../../shared/llm/structured.js';
import { LlmError } from '../../shared/llm/types.js';
import * as z from '../../shared/zod.js';
import { useFakeOpenAi } from '../support/fake-openai.js';

const openai = useFakeOpenAi();

/** GROUPING_CALL_MS (shared/ai-issues/grouping.ts): a grouping call's time when the caller gives no deadline. */
const GROUPING_CALL_MS = 120_000;
const provider = () => llmProvider({ LLM_PROVIDER: 'openai', LLM_MODEL: 'gpt-4o-mini', LLM_BASE_URL: openai().baseUrl, LLM_RETRY_BASE_MS: '1' })!;
const ledger = { runId: 'deadline-calls', source: 'agent' as const, user: 'test' };
const Answer = z.object({ ok: z.boolean() });
const structured = (deadline: number) =>
  structuredAnswer(Answer, {
    provider: provider(),
    system: 's',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }],
    tools: [],
    runTool: async () => ({ content: 'ok', is_error: false }),
    maxRounds: 2,
    ledger,
    deadline,
    reserveMs: 0,
  });
const alerts = Array.from(
  { length: 3 },
  (_, i) =>
    ({
      alert_id: `al-${i}`,
      cluster_id: 'c-1',
      alert_name: `DiskUsageHigh${i}`,
      severity: 'Warning',
      status: 'Firing',
      starts_at: `2026-01-01T00:0${i}:00.000Z`,
      ends_at: null,
      fingerprint: `fp${i}`,
      summary: 'disk',
      detail: '',
    }) as unknown as AlertRecord,
);

describe('the repair call of a structured answer', () => {
  it("ends by the caller's deadline", async () => {
    openai().enqueueText('not json');
    // The repair answer would come after 10 s: the deadline (the test's, 3 s: room for the first call on a
    // loaded machine) ends it first.
    openai().enqueue({ kind: 'delay', ms: 10_000, then: { kind: 'text', text: '{"ok":true}' } });
    const error = await structured(Date.now() + 3_000).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).kind).toBe('timeout');
    expect(openai().answered()).toHaveLength(2); // the loop's call and one repair attempt, not retried
  }, 8_000);

  it('is not made once the deadline has passed: the answer stands as invalid', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const deadline = Date.now() + 60_000;
    // The loop's answer arrives after the deadline (the clock is moved on by the fake's reply).
    openai().enqueue(() => {
      vi.setSystemTime(deadline + 1);
      return { kind: 'text', text: 'not json' };
    });
    openai().enqueueText('{"ok":true}');
    await expect(structured(deadline)).rejects.toThrow(AnswerInvalid);
    expect(openai().answered()).toHaveLength(1);
  });
});

describe('the AI grouping call', () => {
  it("ends by the caller's deadline", async () => {
    openai().enqueue({ kind: 'delay', ms: 10_000, then: { kind: 'text', text: '{"groups":[]}' } });
    const error = await llmGroups(provider(), 'cl-1', alerts, ledger, Date.now() + 400).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).kind).toBe('timeout');
    expect(openai().answered()).toHaveLength(1);
  }, 8_000);

  it(`ends within ${GROUPING_CALL_MS / 1000} s when the caller gives no deadline (retries included)`, async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    // Each failed attempt takes (on the loop's clock) half of the time allowed: one retry fits, not three.
    openai().enqueue(
      ...Array.from({ length: 4 }, () => () => {
        vi.setSystemTime(Date.now() + GROUPING_CALL_MS / 2 + 1);
        return { kind: 'error' as const, status: 500 };
      }),
    );
    await expect(llmGroups(provider(), 'cl-1', alerts, ledger)).rejects.toThrow(LlmError);
    expect(openai().answered()).toHaveLength(2);
  });
});
