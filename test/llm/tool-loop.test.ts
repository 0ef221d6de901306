// The shared agentic loop against a local OpenAI-compatible server: the
// deadline ends tool rounds in time for an answer; every call is in the ledger.
// Time here is the loop's clock (Date, faked): each tool run moves it on by a
// fixed step, so the rounds that fit before the deadline are counted, not
// timed. The real stop latency is measured by `npm run bench -- llm`.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { listUsage } from '../../shared/db/llm-usage.js';
import { llmProvider } from '../../shared/llm/provider.js';
import { nothingSpent, recordedCall, runToolLoop } from '../../shared/llm/tool-loop.js';
import { startFakeOpenAi, openAiReply, type FakeOpenAi } from '../support/fake-openai.js';
import { useTestTables } from '../support/dynamo.js';
import type { DynamoProxy } from '../support/dynamo-proxy.js';

let openai: FakeOpenAi;
let proxy: DynamoProxy;
beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  openai = await startFakeOpenAi();
});
afterAll(async () => {
  await openai?.close();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('runToolLoop', () => {
  it('stops calling tools when the deadline nears, and asks for the answer', async () => {
    const provider = llmProvider({ LLM_PROVIDER: 'openai', LLM_MODEL: 'gpt-4o-mini', LLM_BASE_URL: openai.baseUrl })!;
    for (let i = 0; i < 10; i++) openai.enqueue(openAiReply.toolUse('probe', { i }));
    openai.enqueueText('answer in time');
    // Only Date is faked (network timers stay real); it stands still except where a tool moves it.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const started = Date.now();
    const TOOL_MS = 600;
    const ran: unknown[] = [];
    const result = await runToolLoop({
      provider,
      system: 's',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }],
      tools: [{ name: 'probe', description: 'd', input_schema: { type: 'object' } }],
      runTool: async (_name, input) => {
        ran.push(input);
        vi.setSystemTime(Date.now() + TOOL_MS);
        return { content: 'ok', is_error: false };
      },
      maxRounds: 12,
      ledger: { runId: 'deadline-run', source: 'agent', user: 'test' },
      deadline: started + 1500,
      reserveMs: 800,
    });
    // Out of time once the clock passes 1500 - 800 = 700 ms: after the second tool (1200 ms), not the first (600 ms).
    expect(result.stopped).toBe(true);
    expect(ran).toEqual([{ i: 0 }, { i: 1 }]); // rounds stopped by time, not by the 12-round limit
    expect(result).toMatchObject({ tool_rounds: 2, tool_calls: 2 });
    const answered = openai.answered();
    expect(answered).toHaveLength(3);
    expect(JSON.stringify(answered[1]!.body.messages)).not.toContain('Answer now');
    expect(JSON.stringify(answered[2]!.body.messages)).toContain('Answer now');
    vi.useRealTimers();
    const calls = (await listUsage(1)).filter((u) => u.run_id === 'deadline-run');
    expect(calls).toHaveLength(ran.length + 1);
    expect(calls.every((c) => c.source === 'agent' && !c.error)).toBe(true);
  });

  it("records the prompt tokens the provider's cache served, priced at the model's cached rate", async () => {
    const provider = llmProvider({ LLM_PROVIDER: 'openai', LLM_MODEL: 'gpt-4o-mini', LLM_BASE_URL: openai.baseUrl })!;
    openai.reset(); // replies the deadline test left unused
    openai.enqueueText('cached', { usage: { input_tokens: 10_000, output_tokens: 1_000, cached_tokens: 8_000 } });
    await recordedCall(
      provider,
      { messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }] },
      { runId: 'cached-run', source: 'agent', user: 'test' },
    );
    const [call] = (await listUsage(1)).filter((u) => u.run_id === 'cached-run');
    // gpt-4o-mini (rules/llm-pricing.yaml): 2,000 × $0.15 + 8,000 cached × $0.075 + 1,000 × $0.60 per million
    expect(call).toMatchObject({ input_tokens: 10_000, cached_input_tokens: 8_000, cache_write_input_tokens: 0, output_tokens: 1_000, cost_usd: 0.0015 });
  });

  it('records what an answer it could not use cost, as the provider reported it, on the failed call', async () => {
    const provider = llmProvider({ LLM_PROVIDER: 'openai', LLM_MODEL: 'gpt-4o-mini', LLM_BASE_URL: openai.baseUrl })!;
    openai.reset();
    // Billed: 50,000 prompt tokens, but no choice to read.
    openai.enqueue({
      kind: 'raw',
      status: 200,
      body: JSON.stringify({ choices: [], usage: { prompt_tokens: 50_000, completion_tokens: 2_000, total_tokens: 52_000 } }),
    });
    const spent = nothingSpent();
    const failed = await recordedCall(
      provider,
      { messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }] },
      { runId: 'unusable-run', source: 'agent', user: 'test' },
      spent,
    ).catch((e: unknown) => e);
    expect(failed).toMatchObject({ kind: 'bad_response' });
    const [call] = (await listUsage(1)).filter((u) => u.run_id === 'unusable-run');
    // gpt-4o-mini: 50,000 × $0.15 + 2,000 × $0.60 per million = $0.0087
    expect(call).toMatchObject({ error: true, input_tokens: 50_000, output_tokens: 2_000, total_tokens: 52_000, cost_usd: 0.0087, unpriced: false });
    expect(spent).toEqual({ input_tokens: 50_000, output_tokens: 2_000, total_tokens: 52_000, cost_usd: 0.0087, calls: 1 });
  });

  it('counts a paid call once when the ledger write landed but its answers were lost, through every retry', async () => {
    const provider = llmProvider({ LLM_PROVIDER: 'openai', LLM_MODEL: 'gpt-4o-mini', LLM_BASE_URL: openai.baseUrl })!;
    openai.enqueueText('paid for');
    // The client's own attempts (4) all write and lose their answer, so the loop's retry runs; then DynamoDB answers.
    let lost = 0;
    const stop = proxy.watch((request) =>
      request.operation === 'PutItem' && request.input.TableName?.includes('llm-usage') && lost++ < 4 ? 'lose-answer' : undefined,
    );
    try {
      await recordedCall(
        provider,
        { messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }] },
        { runId: 'lost-answer-run', source: 'agent', user: 'test' },
      );
    } finally {
      stop();
    }
    expect(lost).toBe(5);
    const calls = (await listUsage(1)).filter((u) => u.run_id === 'lost-answer-run');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ error: false, model: 'gpt-4o-mini' });
  });
});
