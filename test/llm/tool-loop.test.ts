// The shared agentic loop against a local OpenAI-compatible server: the
// deadline ends tool rounds in time for an answer; every call is in the ledger.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listUsage } from '../../shared/db/llm-usage.js';
import { llmProvider } from '../../shared/llm/provider.js';
import { runToolLoop } from '../../shared/llm/tool-loop.js';
import { startFakeOpenAi, openAiReply, type FakeOpenAi } from '../support/fake-openai.js';
import { useTestTables } from '../support/dynamo.js';

let openai: FakeOpenAi;
beforeAll(async () => {
  await useTestTables();
  openai = await startFakeOpenAi();
});
afterAll(async () => {
  await openai?.close();
});

describe('runToolLoop', () => {
  it('stops calling tools when the deadline nears, and asks for the answer', async () => {
    const provider = llmProvider({ LLM_PROVIDER: 'openai', LLM_MODEL: 'gpt-4o-mini', LLM_BASE_URL: openai.baseUrl })!;
    for (let i = 0; i < 10; i++) openai.enqueue({ kind: 'delay', ms: 300, then: openAiReply.toolUse('probe', { i }) });
    openai.enqueueText('answer in time');
    const ran: unknown[] = [];
    const started = Date.now();
    const result = await runToolLoop({
      provider,
      system: 's',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }],
      tools: [{ name: 'probe', description: 'd', input_schema: { type: 'object' } }],
      runTool: async (_name, input) => {
        ran.push(input);
        return { content: 'ok', is_error: false };
      },
      maxRounds: 12,
      ledger: { runId: 'deadline-run', source: 'agent', user: 'test' },
      deadline: started + 1500,
      reserveMs: 800,
    });
    expect(result.stopped).toBe(true);
    expect(ran.length).toBeLessThan(4); // rounds stopped by time, not by the 12-round limit
    expect(Date.now() - started).toBeLessThan(2500);
    const lastRequest = openai.answered().at(-1)!.body.messages;
    expect(JSON.stringify(lastRequest)).toContain('Answer now');
    const calls = (await listUsage(1)).filter((u) => u.run_id === 'deadline-run');
    expect(calls).toHaveLength(ran.length + 1);
    expect(calls.every((c) => c.source === 'agent' && !c.error)).toBe(true);
  });
});
