// One round of tool calls is bounded too, not only the rounds between them: at most
// MAX_TOOL_CALLS_PER_ROUND (8) run, none starts (or keeps the loop waiting) once the time
// reserved for the answer is reached, and every call the model made is still answered.
// Counted, not timed: the loop's clock (Date) is moved by the tools where time matters.
import { describe, expect, it, vi } from 'vitest';
import { llmProvider } from '../../shared/llm/provider.js';
import { runToolLoop } from '../../shared/llm/tool-loop.js';
import { useFakeOpenAi } from '../support/fake-openai.js';

const openai = useFakeOpenAi();

/** MAX_TOOL_CALLS_PER_ROUND (shared/llm/tool-loop.ts), as shared/llm/README.md states it. */
const CAP = 8;
const probe = [{ name: 'probe', description: 'd', input_schema: { type: 'object' } }];
const go = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'go' }] }];
const provider = () => llmProvider({ LLM_PROVIDER: 'openai', LLM_MODEL: 'gpt-4o-mini', LLM_BASE_URL: openai().baseUrl })!;
/** The `tool` messages of a request, in order. */
const toolMessages = (i: number) =>
  openai()
    .answered()
    [i]!.body.messages.filter((m) => m.role === 'tool');
/** The loop on the probe tool (12 rounds at most, as chat), with `runTool` and the rest of `over`. */
const loop = (runId: string, runTool: Parameters<typeof runToolLoop>[0]['runTool'], over: Partial<Parameters<typeof runToolLoop>[0]> = {}) =>
  runToolLoop({
    provider: provider(),
    system: 's',
    messages: go,
    tools: probe,
    runTool,
    maxRounds: 12,
    ledger: { runId, source: 'chat', user: 'test' },
    ...over,
  });

describe('one round of tool calls', () => {
  it(`runs at most ${CAP} of the calls asked for in one turn, and answers the others as skipped`, async () => {
    openai().enqueueToolUse(Array.from({ length: 12 }, (_, i) => ({ name: 'probe', input: { i } })));
    openai().enqueueText('done');
    const ran: unknown[] = [];
    const result = await loop('cap-run', async (_name, input) => {
      ran.push(input);
      return { content: 'ok', is_error: false };
    });
    expect(result.text).toBe('done');
    expect(ran).toHaveLength(CAP);
    expect(result.tool_calls).toBe(CAP);
    // All 12 calls are answered (the strict fake refuses an unanswered one): 8 ran, 4 say why not.
    const answers = toolMessages(1);
    expect(answers).toHaveLength(12);
    expect(answers.slice(CAP).every((m) => m.content?.includes(`at most ${CAP} tool calls`))).toBe(true);
  });

  it("stops starting tools once the answer's reserved time is reached, and still makes the final call", async () => {
    openai().enqueueToolUse(Array.from({ length: 6 }, (_, i) => ({ name: 'probe', input: { i } })));
    openai().enqueueText('answer in time');
    // Only Date is faked (network timers stay real); each tool moves it on by 600 ms.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const started = Date.now();
    const ran: unknown[] = [];
    const result = await loop(
      'round-time-run',
      async (_name, input) => {
        ran.push(input);
        vi.setSystemTime(Date.now() + 600);
        return { content: 'ok', is_error: false };
      },
      { deadline: started + 3000, reserveMs: 1500 },
    );
    // Tools start at 0, 600 and 1200 ms; at 1800 ms the reserve (from 1500 ms) has begun.
    expect(ran).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }]);
    expect(result).toMatchObject({ text: 'answer in time', stopped: true, tool_calls: 3 });
    expect(openai().answered()).toHaveLength(2);
    expect(toolMessages(1).map((m) => m.content)).toEqual(['ok', 'ok', 'ok', ...Array(3).fill('Error: not run: out of time')]);
    expect(JSON.stringify(openai().answered()[1]!.body.messages)).toContain('Answer now');
  });

  it('does not wait for a tool that is still running when the reserved time begins', async () => {
    openai().enqueueToolUse([
      { name: 'probe', input: { hang: true } },
      { name: 'probe', input: { hang: false } },
    ]);
    openai().enqueueText('answered without it');
    const ran: unknown[] = [];
    const result = await loop(
      'hung-tool-run',
      // A tool that never answers: the loop must not wait on it past the reserve.
      (_name, input) => {
        ran.push(input);
        return new Promise(() => undefined);
      },
      // Tools may start for 3 s (a local model call takes milliseconds), then the answer's 17 s begin.
      { deadline: Date.now() + 20_000, reserveMs: 17_000 },
    );
    expect(result).toMatchObject({ text: 'answered without it', stopped: true, tool_calls: 1 });
    expect(ran).toEqual([{ hang: true }]);
    expect(toolMessages(1).map((m) => m.content)).toEqual(['Error: stopped: out of time before it finished', 'Error: not run: out of time']);
  }, 15_000);
});

describe("a whole loop's tool results", () => {
  it('gathers at most 120,000 characters: the result that reaches it is cut, later calls are not run, and the next call is the last', async () => {
    for (let r = 0; r < 4; r++) openai().enqueueToolUse(Array.from({ length: 3 }, (_, i) => ({ name: 'probe', input: { r, i } })));
    openai().enqueueText('answer from what it has');
    const ran: unknown[] = [];
    const result = await loop('result-chars-run', async (_name, input) => {
      ran.push(input);
      return { content: 'x'.repeat(11_000), is_error: false };
    });
    // 11 results of 11,000 would be 121,000: the 11th (round 4's second) is cut to 10,000, the 12th not run.
    expect(ran).toHaveLength(11);
    expect(result).toMatchObject({ text: 'answer from what it has', stopped: true, tool_calls: 11 });
    const answered = openai().answered();
    expect(answered).toHaveLength(5);
    const lastRound = toolMessages(4).slice(-3);
    expect(lastRound[0]!.content).toBe('x'.repeat(11_000));
    expect(lastRound[1]!.content).toBe(`${'x'.repeat(10_000)}\n[cut: this question's tool results reached 120,000 characters]`);
    expect(lastRound[2]!.content).toContain("not run: this question's tool results reached 120,000 characters");
    expect(JSON.stringify(answered[3]!.body.messages)).not.toContain('Answer now');
    expect(JSON.stringify(answered[4]!.body.messages)).toContain('Answer now');
  });

  it('cuts at a whole character: an emoji astride the 120,000th is dropped whole, never sent as half a surrogate pair', async () => {
    openai().enqueueToolUse([{ name: 'probe', input: {} }]);
    openai().enqueueText('answered');
    // The emoji's two UTF-16 units are the 120,000th and 120,001st: a cut between them would leave a lone \ud83d.
    await loop('surrogate-cut-run', async () => ({ content: `${'x'.repeat(119_999)}🔥 DiskUsageHigh`, is_error: false }));
    const [cut] = toolMessages(1);
    expect(cut!.content).toBe(`${'x'.repeat(119_999)}\n[cut: this question's tool results reached 120,000 characters]`);
  });
});
