// LLM calls against local servers speaking the real protocols (the fakes of
// test/support), the timings the unit tests in test/llm/ and test/knowledge/
// check only by count: how soon a provider gives up after LLM_TIMEOUT_MS, how
// long a Retry-After wait takes, how close to its deadline the tool loop
// answers, and the runbook search (a tool of the AI workers), first and cached.
// The tool loop writes the usage ledger, so this runs against DynamoDB Local.
import { searchKnowledge } from '../../shared/knowledge/search.js';
import { llmProvider } from '../../shared/llm/provider.js';
import { runToolLoop } from '../../shared/llm/tool-loop.js';
import { LlmError, type ChatRequest, type LlmProvider } from '../../shared/llm/types.js';
import { startFakeBedrock } from '../support/fake-bedrock.js';
import { openAiReply, startFakeOpenAi } from '../support/fake-openai.js';
import type { BenchContext } from './run.js';

export const title = 'LLM calls against local servers: timeouts, Retry-After, tool-loop deadline, runbook search';

const RUNS = 5;
const hello: ChatRequest = { messages: [{ role: 'user', content: [{ type: 'text', text: 'Which clusters are at risk?' }] }] };

const median = (ms: number[]) => [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)]!;
const fmt = (ms: number[]) => `${median(ms).toFixed(0)} ms (max ${Math.max(...ms).toFixed(0)})`;

/** Wall time of `call`, which must fail with an LlmError of `kind`. */
async function failureTime(call: () => Promise<unknown>, kind: string): Promise<number> {
  const started = performance.now();
  const error = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  const ms = performance.now() - started;
  if (!(error instanceof LlmError) || error.kind !== kind) throw new Error(`expected an LlmError of kind ${kind}, got ${String(error)}`);
  return ms;
}

async function timed(call: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await call();
  return performance.now() - started;
}

export async function run({ report }: BenchContext): Promise<void> {
  const openai = await startFakeOpenAi();
  const bedrock = await startFakeBedrock();
  try {
    const retry = { LLM_RETRY_BASE_MS: '1', LLM_MAX_ATTEMPTS: '2', LLM_TIMEOUT_MS: '200' };
    const openaiProvider = (env: NodeJS.ProcessEnv = {}): LlmProvider =>
      llmProvider({ LLM_PROVIDER: 'openai', LLM_MODEL: 'gpt-4o-mini', LLM_BASE_URL: openai.baseUrl, ...retry, ...env })!;
    const bedrockProvider = (env: NodeJS.ProcessEnv = {}): LlmProvider =>
      llmProvider({
        LLM_PROVIDER: 'bedrock',
        LLM_MODEL: 'anthropic.claude-3-5-haiku-20241022-v1:0',
        AWS_REGION: 'us-east-1',
        AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.endpoint,
        ...retry,
        ...env,
      })!;

    // A server that answers only after 2 s: two attempts of 200 ms each, then the timeout error.
    openai.defaultReply = { kind: 'delay', ms: 2_000, then: openAiReply.text('too late') };
    bedrock.defaultReply = { kind: 'delay', ms: 2_000, then: { kind: 'text', text: 'too late' } };
    await failureTime(() => openaiProvider().converse(hello), 'timeout'); // warm-up (connections, the SDK's loading)
    await failureTime(() => bedrockProvider().converse(hello), 'timeout');
    for (const [name, provider] of [
      ['OpenAI-compatible', openaiProvider],
      ['Bedrock', bedrockProvider],
    ] as const) {
      const ms: number[] = [];
      for (let i = 0; i < RUNS; i++) ms.push(await failureTime(() => provider().converse(hello), 'timeout'));
      report('llm', `${name}: timeout error, LLM_TIMEOUT_MS=200 × 2 attempts (ideal 400 ms), median of ${RUNS}`, fmt(ms));
    }
    openai.reset();
    bedrock.reset();

    // Retry-After: 1 on the first answer, then the answer.
    for (const [name, wait] of [
      [
        'OpenAI-compatible',
        () => {
          openai.enqueueError(429, { retryAfter: '1' }).enqueueText('ok');
          return openaiProvider().converse(hello);
        },
      ],
      [
        'Bedrock',
        () => {
          bedrock.enqueueError('ThrottlingException', { retryAfter: '1' }).enqueueText('ok');
          return bedrockProvider().converse(hello);
        },
      ],
    ] as const) {
      const ms: number[] = [];
      for (let i = 0; i < 3; i++) ms.push(await timed(wait));
      report('llm', `${name}: answer after a 429 with Retry-After: 1 (ideal 1,000 ms), median of 3`, fmt(ms));
    }

    // The tool loop: model calls of 300 ms, a deadline 1,500 ms away, 800 ms kept for the answer.
    const rounds: number[] = [];
    const answeredAt: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      openai.reset();
      for (let r = 0; r < 12; r++) openai.enqueue({ kind: 'delay', ms: 300, then: openAiReply.toolUse('probe', { r }) });
      const started = Date.now();
      const result = await runToolLoop({
        provider: openaiProvider({ LLM_TIMEOUT_MS: '60000' }),
        system: 's',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }],
        tools: [{ name: 'probe', description: 'd', input_schema: { type: 'object' } }],
        runTool: async () => ({ content: 'ok', is_error: false }),
        maxRounds: 12,
        ledger: { runId: `bench-deadline-${i}`, source: 'agent', user: 'bench' },
        deadline: started + 1_500,
        reserveMs: 800,
      });
      if (!result.stopped) throw new Error('the tool loop did not stop');
      answeredAt.push(Date.now() - started);
      rounds.push(result.tool_rounds);
    }
    report(
      'llm',
      `tool loop, 300 ms model calls, deadline 1,500 ms with 800 ms reserve: answered after (median of ${RUNS})`,
      `${fmt(answeredAt)}, ${median(rounds)} tool rounds`,
    );
  } finally {
    await openai.close();
    await bedrock.close();
  }

  // Runbook search: the first call reads the runbooks and builds the index; later ones use it.
  const first = await timed(() => searchKnowledge('disk full'));
  const cached: number[] = [];
  for (let i = 0; i < 50; i++) cached.push(await timed(() => searchKnowledge(i % 2 ? 'disk full' : 'p99 latency slow queries')));
  report('llm', 'runbook search: first call (reads and indexes the runbooks)', `${first.toFixed(1)} ms`);
  report('llm', 'runbook search: later calls, median / max of 50', `${median(cached).toFixed(2)} / ${Math.max(...cached).toFixed(2)} ms`);
}
