// The OpenAI-compatible provider against a local server speaking the chat
// completions protocol (test/support/fake-openai.ts).
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { REASONING_ALLOWANCE, chatCompletionBody, isOpenAi } from '../../shared/llm/openai.js';
import { llmProvider } from '../../shared/llm/provider.js';
import { LlmError, type ChatRequest, type LlmProvider } from '../../shared/llm/types.js';
import { openAiReply, startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.js';

const KEY = 'sk-proj-fleet-health-S3CRET-0123456789abcdef';
const MODEL = 'gpt-4o-mini';

const fleetQuery = {
  name: 'fleet_query',
  description: 'Run a read-only SQL query over the fleet tables.',
  input_schema: { type: 'object', properties: { sql: { type: 'string' } }, required: ['sql'] },
};

let fake: FakeOpenAi;

beforeAll(async () => {
  fake = await startFakeOpenAi({ apiKey: KEY });
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => {
  fake.reset();
});

function openai(overrides: NodeJS.ProcessEnv = {}): LlmProvider {
  const provider = llmProvider({
    LLM_PROVIDER: 'openai',
    LLM_MODEL: MODEL,
    LLM_BASE_URL: fake.baseUrl,
    LLM_API_KEY: KEY,
    LLM_RETRY_BASE_MS: '1',
    ...overrides,
  });
  expect(provider?.name).toBe('openai');
  return provider!;
}

const hello: ChatRequest = { messages: [{ role: 'user', content: [{ type: 'text', text: 'Which clusters are at risk?' }] }] };

/** The LlmError a failing converse() throws; its message must never carry the API key (or a piece of it). */
async function llmError(calling: Promise<unknown>, key = KEY): Promise<LlmError> {
  const error = await calling.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LlmError);
  const message = (error as LlmError).message;
  expect(message).not.toContain(key);
  expect(message).not.toContain(key.slice(-8));
  return error as LlmError;
}

/** The delays of the timers set while `run` runs (the retry waits among them); the timers themselves run as usual. */
async function scheduledWaits(run: () => Promise<unknown>): Promise<number[]> {
  const timers = vi.spyOn(globalThis, 'setTimeout');
  try {
    await run();
    return timers.mock.calls.map(([, ms]) => Number(ms ?? 0));
  } finally {
    timers.mockRestore();
  }
}

describe('request mapping', () => {
  it('sends system, tools, settings, tool calls and tool results as chat completions expects', async () => {
    await openai().converse({
      system: 'You are the fleet assistant.',
      tools: [fleetQuery],
      max_tokens: 512,
      temperature: 0,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Which clusters are at risk?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'call_a', name: 'fleet_query', input: { sql: 'select 1' } },
            { type: 'tool_use', id: 'call_b', name: 'fleet_query', input: { sql: 'select 2' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_a', content: '[{"cluster":"prod-db-1"}]' },
            { type: 'tool_result', tool_use_id: 'call_b', content: 'syntax error at "2"', is_error: true },
            { type: 'text', text: 'Focus on production.' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'call_c', name: 'fleet_query', input: {} },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_c', content: '[]' }] },
      ],
    });

    expect(fake.received).toHaveLength(1);
    const [request] = fake.received;
    expect(request!.rejected).toBeUndefined();
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/v1/chat/completions');
    expect(request!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.body).toEqual({
      model: MODEL,
      max_tokens: 512,
      temperature: 0,
      tools: [{ type: 'function', function: { name: 'fleet_query', description: fleetQuery.description, parameters: fleetQuery.input_schema } }],
      messages: [
        { role: 'system', content: 'You are the fleet assistant.' },
        { role: 'user', content: 'Which clusters are at risk?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'fleet_query', arguments: '{"sql":"select 1"}' } },
            { id: 'call_b', type: 'function', function: { name: 'fleet_query', arguments: '{"sql":"select 2"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '[{"cluster":"prod-db-1"}]' },
        { role: 'tool', tool_call_id: 'call_b', content: 'Error: syntax error at "2"' },
        { role: 'user', content: 'Focus on production.' },
        { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'call_c', type: 'function', function: { name: 'fleet_query', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_c', content: '[]' },
      ],
    });
  });

  it('leaves out tools and settings when the request has none', async () => {
    await openai().converse(hello);
    expect(fake.received[0]!.body).toEqual({ model: MODEL, messages: [{ role: 'user', content: 'Which clusters are at risk?' }] });
  });

  it.each(['', '/', '/v1', '/v1/'])('accepts LLM_BASE_URL with suffix %j', async (suffix) => {
    await openai({ LLM_BASE_URL: `${fake.baseUrl}${suffix}` }).converse(hello);
    expect(fake.received[0]!.path).toBe('/v1/chat/completions');
  });

  it('sends no Authorization header to a local server without a key', async () => {
    const local = await startFakeOpenAi();
    try {
      const provider = llmProvider({ LLM_PROVIDER: 'openai', LLM_MODEL: 'llama3.1', LLM_BASE_URL: local.baseUrl.replace('127.0.0.1', 'localhost') });
      expect((await provider!.converse(hello)).message.content).toEqual([{ type: 'text', text: 'OK' }]);
      expect(local.received[0]!.headers.authorization).toBeUndefined();
    } finally {
      await local.close();
    }
  });
});

describe('answers', () => {
  it('maps tool calls and their answers round trip, with usage and stop reasons', async () => {
    fake
      .enqueueToolUse(
        [
          { name: 'fleet_query', input: { sql: 'select count(*) from clusters' } },
          { name: 'fleet_query', input: { sql: 'select count(*) from issues' } },
        ],
        { usage: { input_tokens: 800, output_tokens: 60 } },
      )
      .enqueueText('42 clusters, 7 open issues.', { usage: { input_tokens: 950, output_tokens: 15, total_tokens: 1000 } });
    const provider = openai();
    const request: ChatRequest = { tools: [fleetQuery], messages: [...hello.messages] };

    const first = await provider.converse(request);
    expect(first).toMatchObject({
      message: {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'call_1', name: 'fleet_query', input: { sql: 'select count(*) from clusters' } },
          { type: 'tool_use', id: 'call_2', name: 'fleet_query', input: { sql: 'select count(*) from issues' } },
        ],
      },
      stop_reason: 'tool_use',
      usage: { input_tokens: 800, output_tokens: 60, total_tokens: 860 },
      model: MODEL,
    });
    expect(first.latency_ms).toBeGreaterThanOrEqual(0);

    request.messages.push(first.message, {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'call_1', content: '42' },
        { type: 'tool_result', tool_use_id: 'call_2', content: '7' },
      ],
    });
    const second = await provider.converse(request);
    expect(second).toMatchObject({
      message: { role: 'assistant', content: [{ type: 'text', text: '42 clusters, 7 open issues.' }] },
      stop_reason: 'end_turn',
      // The total it reported (1000) is not input + output: their sum is recorded, so every token figure adds up.
      usage: { input_tokens: 950, output_tokens: 15, total_tokens: 965 },
    });
    expect(fake.received.map((r) => r.rejected)).toEqual([undefined, undefined]);
    expect(fake.received[1]!.body.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'fleet_query', arguments: '{"sql":"select count(*) from clusters"}' } },
          { id: 'call_2', type: 'function', function: { name: 'fleet_query', arguments: '{"sql":"select count(*) from issues"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '42' },
      { role: 'tool', tool_call_id: 'call_2', content: '7' },
    ]);
  });

  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['content_filter', 'content_filtered'],
  ] as const)('maps finish_reason %s to %s', async (finishReason, expected) => {
    fake.enqueueText('…', { finishReason });
    expect((await openai().converse(hello)).stop_reason).toBe(expected);
  });

  it('treats tool calls with finish_reason stop (some compatible servers) as tool_use', async () => {
    fake.enqueue({ kind: 'tool_use', calls: [{ name: 'fleet_query', input: { sql: 'select 1' } }], finishReason: 'stop' });
    expect((await openai().converse({ ...hello, tools: [fleetQuery] })).stop_reason).toBe('tool_use');
  });

  it.each([
    ['not JSON', '{"sql": "select', /^The tool arguments are not valid JSON \(.+\); send a JSON object matching the tool's input schema\.$/],
    ['a JSON array', '["select 1"]', /^The tool arguments must be a JSON object, got an array;/],
    ['a JSON string', '"select 1"', /^The tool arguments must be a JSON object, got a string;/],
    ['JSON null', 'null', /^The tool arguments must be a JSON object, got null;/],
  ])('answers tool arguments that are %s with input null and input_error, never an exception', async (_, args, explanation) => {
    fake.enqueueMalformedToolCall('fleet_query', args, { usage: { input_tokens: 10, output_tokens: 3 } });
    const answer = await openai().converse({ ...hello, tools: [fleetQuery] });
    expect(answer.stop_reason).toBe('tool_use');
    expect(answer.usage).toEqual({ input_tokens: 10, output_tokens: 3, total_tokens: 13 });
    expect(answer.message.content).toHaveLength(1);
    const call = answer.message.content[0]!;
    expect(call).toMatchObject({ type: 'tool_use', id: 'call_1', name: 'fleet_query', input: null });
    expect(call.type === 'tool_use' && call.input_error).toMatch(explanation);
  });

  it('lets the loop answer a malformed call with an error result and carry on', async () => {
    fake.enqueue(openAiReply.malformedToolCall('fleet_query', '{sql: select 1}'), openAiReply.text('Sorry, done.'));
    const provider = openai();
    const request: ChatRequest = { tools: [fleetQuery], messages: [...hello.messages] };
    const first = await provider.converse(request);
    const call = first.message.content[0]!;
    if (call.type !== 'tool_use') throw new Error('expected a tool call');
    request.messages.push(first.message, {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: call.id, content: call.input_error!, is_error: true }],
    });
    expect((await provider.converse(request)).message.content).toEqual([{ type: 'text', text: 'Sorry, done.' }]);
    // The broken call goes back as an empty object: the original text is not JSON and could not be sent.
    expect(fake.received[1]!.body.messages[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'fleet_query', arguments: '{}' } }],
    });
    expect(fake.received[1]!.body.messages[2]!.content).toMatch(/^Error: The tool arguments are not valid JSON/);
  });

  it('reports the configured model, not the dated name the server answers with (the ledger prices by it)', async () => {
    const completion = {
      model: 'gpt-4o-mini-2024-07-18',
      choices: [{ message: { content: 'hi' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
    };
    fake.enqueue({ kind: 'raw', status: 200, body: JSON.stringify(completion) });
    expect(await openai().converse(hello)).toMatchObject({ model: MODEL, usage: { input_tokens: 3, output_tokens: 1, total_tokens: 4 } });
  });

  it('estimates the tokens of an answer that reports none (4 characters a token), so its cost and the chat budget still count', async () => {
    const answer = { choices: [{ message: { content: 'x'.repeat(400) }, finish_reason: 'stop' }] };
    fake.enqueue({ kind: 'raw', status: 200, body: JSON.stringify(answer) });
    const { usage } = await openai().converse(hello);
    const sent = JSON.stringify(fake.received.at(-1)!.body).length; // the request as sent: compact JSON
    expect(usage).toMatchObject({ input_tokens: Math.ceil(sent / 4), output_tokens: 100, total_tokens: Math.ceil(sent / 4) + 100 });
    expect(usage.input_tokens).toBeGreaterThan(0);
    // Tool calls' names and arguments are what such an answer produced.
    const calls = {
      choices: [
        {
          message: { content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'a', arguments: '{"q":"12345678"}' } }] },
          finish_reason: 'tool_calls',
        },
      ],
    };
    fake.enqueue({ kind: 'raw', status: 200, body: JSON.stringify(calls) });
    expect((await openai().converse(hello)).usage.output_tokens).toBe(Math.ceil(JSON.stringify({ name: 'a', arguments: '{"q":"12345678"}' }).length / 4));
  });

  it('reads empty arguments as an empty object', async () => {
    fake.enqueueMalformedToolCall('list_clusters', '');
    expect((await openai().converse(hello)).message.content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'list_clusters', input: {} }]);
  });

  it.each([
    ['not JSON', '<html>Bad gateway</html>'],
    ['without choices', JSON.stringify({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } })],
    [
      'with a nameless tool call',
      JSON.stringify({
        choices: [{ message: { content: null, tool_calls: [{ id: 'x', function: { arguments: '{}' } }] }, finish_reason: 'tool_calls' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    ],
  ])('reports a 200 answer %s as bad_response without retrying', async (_, body) => {
    fake.enqueue({ kind: 'raw', status: 200, body });
    const error = await llmError(openai().converse(hello));
    expect(error).toMatchObject({ kind: 'bad_response', message: 'The OpenAI-compatible endpoint answered with something that is not a chat completion' });
    expect(fake.received).toHaveLength(1);
    // The usage such an answer reports is billed all the same: it travels with the error to the ledger (recordedCall).
    expect(error.paid).toEqual(body.includes('"usage"') ? { input_tokens: 1, output_tokens: 1, total_tokens: 2 } : undefined);
  });

  it("caps the answer as OpenAI's own API names it (max_completion_tokens: its reasoning models refuse max_tokens), and as other servers do elsewhere", () => {
    const request: ChatRequest = { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], max_tokens: 100 };
    const toOpenAi = chatCompletionBody('gpt-4.1', request, true);
    expect(toOpenAi).toMatchObject({ max_completion_tokens: 100 });
    expect(toOpenAi).not.toHaveProperty('max_tokens');
    // A reasoning model's cap counts its hidden reasoning too: it gets room for that on top.
    for (const model of ['o4-mini', 'o3', 'gpt-5', 'gpt-5-mini', 'GPT-5.1', 'ft:o4-mini-2025-04-16:acme::abc123']) {
      expect(chatCompletionBody(model, request, true), model).toMatchObject({ max_completion_tokens: 100 + REASONING_ALLOWANCE });
    }
    for (const model of ['gpt-4o', 'gpt-4o-mini', 'gpt-5-chat-latest', 'gpt-5.1-chat-latest', 'omni-moderation-latest', 'my-o3-deployment']) {
      expect(chatCompletionBody(model, request, true), model).toMatchObject({ max_completion_tokens: 100 });
    }
    // LLM_REASONING_EFFORT reaches a reasoning model on OpenAI's API, and nothing else (the others refuse the field).
    expect(chatCompletionBody('gpt-5-mini', request, true, 'low')).toMatchObject({ reasoning_effort: 'low' });
    expect(chatCompletionBody('gpt-4o', request, true, 'low')).not.toHaveProperty('reasoning_effort');
    expect(chatCompletionBody('o3', request, false, 'low')).not.toHaveProperty('reasoning_effort');
    expect(chatCompletionBody('o3', request, true)).not.toHaveProperty('reasoning_effort');
    // Elsewhere the model's name decides nothing: a compatible server's max_tokens is the caller's.
    expect(chatCompletionBody('o3', request)).toMatchObject({ max_tokens: 100 });
    const elsewhere = chatCompletionBody('llama3', request);
    expect(elsewhere).toMatchObject({ max_tokens: 100 });
    expect(elsewhere).not.toHaveProperty('max_completion_tokens');
    const azure = ['https://my-team.openai.azure.com', 'https://my-team.cognitiveservices.azure.com/openai', 'https://my-team.services.ai.azure.com/openai'];
    expect(['https://api.openai.com', 'https://api.openai.com/', ...azure].map(isOpenAi)).toEqual([true, true, true, true, true]);
    expect(['http://127.0.0.1:8080', 'https://api.openai.com.example.net', 'https://llm.example.com/openai.azure.com'].map(isOpenAi)).toEqual([
      false,
      false,
      false,
    ]);
  });

  it('answers a refusal in its own words (content null), not as an answer without text', async () => {
    const body = {
      choices: [{ message: { content: null, refusal: 'I cannot help with that request.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
    };
    fake.enqueue({ kind: 'raw', status: 200, body: JSON.stringify(body) });
    const answer = await openai().converse(hello);
    expect(answer.message.content).toEqual([{ type: 'text', text: 'I cannot help with that request.' }]);
    expect(answer.stop_reason).toBe('end_turn');
  });

  it("reads a tool call's arguments sent as an object, and content sent as OpenAI's array of parts", async () => {
    const body = {
      choices: [
        {
          message: {
            content: [
              { type: 'text', text: 'Checking ' },
              { type: 'refusal', refusal: 'n/a' },
              { type: 'text', text: 'disk.' },
            ],
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_clusters', arguments: { tier: 'S' } } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
    };
    fake.enqueue({ kind: 'raw', status: 200, body: JSON.stringify(body) });
    expect((await openai().converse(hello)).message.content).toEqual([
      { type: 'text', text: 'Checking disk.' },
      { type: 'tool_use', id: 'c1', name: 'list_clusters', input: { tier: 'S' } },
    ]);
  });

  it.each([
    ['beyond a billion', { prompt_tokens: 1_000_000_001, completion_tokens: 1 }],
    ['negative', { prompt_tokens: 10, completion_tokens: -1 }],
    ['not whole', { prompt_tokens: 10.5, completion_tokens: 1 }],
    ['whose total is beyond a billion', { prompt_tokens: 10, completion_tokens: 1, total_tokens: 1e16 }],
  ])('reports token counts %s as bad_response without retrying', async (_, usage) => {
    fake.enqueue({ kind: 'raw', status: 200, body: JSON.stringify({ choices: [{ message: { content: 'hi' }, finish_reason: 'stop' }], usage }) });
    const error = await llmError(openai().converse(hello));
    expect(error).toMatchObject({
      kind: 'bad_response',
      message: 'The OpenAI-compatible endpoint answered with token counts that are not whole numbers from 0 to 1,000,000,000',
    });
    expect(fake.received).toHaveLength(1);
  });

  it('refuses an answer of more than 8 MB as bad_response without retrying', async () => {
    fake.enqueue({ kind: 'raw', status: 200, body: ' '.repeat(8 * 1024 * 1024 + 1) });
    expect(await llmError(openai().converse(hello))).toMatchObject({
      kind: 'bad_response',
      message: 'The OpenAI-compatible endpoint answered with more than 8 MB',
    });
    expect(fake.received).toHaveLength(1);
  });

  it('takes a billion tokens, the most one call may report', async () => {
    fake.enqueue({
      kind: 'raw',
      status: 200,
      body: JSON.stringify({ choices: [{ message: { content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 999_999_999, completion_tokens: 1 } }),
    });
    expect((await openai().converse(hello)).usage).toEqual({ input_tokens: 999_999_999, output_tokens: 1, total_tokens: 1_000_000_000 });
  });

  it('reads the prompt tokens served from the cache (prompt_tokens_details.cached_tokens), a part of input_tokens', async () => {
    fake.enqueueText('again', { usage: { input_tokens: 2006, output_tokens: 300, cached_tokens: 1920 } });
    expect((await openai().converse(hello)).usage).toEqual({ input_tokens: 2006, output_tokens: 300, total_tokens: 2306, cached_input_tokens: 1920 });
    // OpenAI sends 0 on a miss; some compatible servers send null details.
    fake.enqueueText('miss', { usage: { input_tokens: 500, output_tokens: 5, cached_tokens: 0 } });
    expect((await openai().converse(hello)).usage).toEqual({ input_tokens: 500, output_tokens: 5, total_tokens: 505 });
    const nullDetails = {
      choices: [{ message: { content: 'hi' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 1, prompt_tokens_details: null },
    };
    fake.enqueue({ kind: 'raw', status: 200, body: JSON.stringify(nullDetails) });
    expect((await openai().converse(hello)).usage).toEqual({ input_tokens: 3, output_tokens: 1, total_tokens: 4 });
  });

  it.each([
    ['more than the prompt', { input_tokens: 100, output_tokens: 1, cached_tokens: 101 }],
    ['negative', { input_tokens: 100, output_tokens: 1, cached_tokens: -1 }],
    ['not whole', { input_tokens: 100, output_tokens: 1, cached_tokens: 1.5 }],
  ])('reports a cached token count %s as bad_response without retrying', async (_, usage) => {
    fake.enqueueText('hi', { usage });
    expect(await llmError(openai().converse(hello))).toMatchObject({
      kind: 'bad_response',
      message: 'The OpenAI-compatible endpoint answered with cached token counts that are not whole numbers within its input tokens',
    });
    expect(fake.received).toHaveLength(1);
  });
});

describe('retries and errors', () => {
  it('retries 429 and 5xx, then succeeds', async () => {
    fake.enqueueError(429).enqueueError(500).enqueueError(503).enqueueText('finally');
    expect((await openai().converse(hello)).message.content).toEqual([{ type: 'text', text: 'finally' }]);
    expect(fake.received).toHaveLength(4);
  });

  it('gives up after LLM_MAX_ATTEMPTS with kind throttled, passing on the provider message', async () => {
    fake.defaultReply = openAiReply.error(429);
    const error = await llmError(openai({ LLM_MAX_ATTEMPTS: '2' }).converse(hello));
    expect(error).toMatchObject({ kind: 'throttled', status: 429 });
    expect(error.message).toBe(
      'The OpenAI-compatible endpoint is rate-limiting requests (HTTP 429): Rate limit reached for requests. Please try again in 1s. (gave up after 2 attempts)',
    );
    expect(fake.received).toHaveLength(2);
  });

  it('does not retry 429 insufficient_quota', async () => {
    fake.enqueueError(429, {
      message: 'You exceeded your current quota, please check your plan and billing details.',
      type: 'insufficient_quota',
      code: 'insufficient_quota',
    });
    expect(await llmError(openai().converse(hello))).toMatchObject({ kind: 'throttled', status: 429 });
    expect(fake.received).toHaveLength(1);
  });

  it('honours Retry-After', async () => {
    fake.enqueueError(429, { retryAfter: '1' }).enqueueText('ok');
    // LLM_RETRY_BASE_MS is 1 here: a 1,000 ms wait before the retry can only come from Retry-After.
    const waits = await scheduledWaits(() => openai().converse(hello));
    expect(waits).toContain(1_000);
    expect(fake.received).toHaveLength(2);
  });

  it('gives up on 5xx with kind unavailable', async () => {
    fake.defaultReply = openAiReply.error(500);
    const error = await llmError(openai({ LLM_MAX_ATTEMPTS: '3' }).converse(hello));
    expect(error).toMatchObject({ kind: 'unavailable', status: 500 });
    expect(fake.received).toHaveLength(3);
  });

  it('does not retry other 4xx, and cuts the provider message to 300 characters', async () => {
    fake.enqueueError(400, { message: `This model's maximum context length is 128000 tokens. ${'x'.repeat(1000)}`, code: 'context_length_exceeded' });
    const error = await llmError(openai().converse(hello));
    expect(error).toMatchObject({ kind: 'bad_request', status: 400 });
    expect(error.message).toMatch(
      /^The OpenAI-compatible endpoint rejected the request \(HTTP 400\): This model's maximum context length is 128000 tokens\. x+$/,
    );
    expect(error.message.length).toBe('The OpenAI-compatible endpoint rejected the request (HTTP 400): '.length + 300);
    expect(fake.received).toHaveLength(1);

    fake.reset();
    fake.enqueueError(404);
    expect(await llmError(openai().converse(hello))).toMatchObject({ kind: 'bad_request', status: 404 });
    expect(fake.received).toHaveLength(1);
  });

  it('reports a wrong key as auth without retrying and without echoing the key', async () => {
    const wrong = 'sk-proj-wrong-key-S3CRET-abcdef0123456789';
    const error = await llmError(openai({ LLM_API_KEY: wrong }).converse(hello), wrong);
    expect(error).toMatchObject({ kind: 'auth', status: 401 });
    expect(error.message).toBe('The OpenAI-compatible endpoint refused the API key (HTTP 401): check LLM_API_KEY');
    expect(fake.received).toHaveLength(1);
    // The fake did quote it: the provider dropped it.
    expect(fake.received[0]!.rejected).toContain(wrong);
  });

  it('redacts a piece of the key, as a provider quotes its start, and any other provider key', async () => {
    fake.enqueueError(400, { message: `Incorrect API key (key ${KEY.slice(0, 12)}...) or gsk_abcdefgh12345678 for that model` });
    const error = await llmError(openai().converse(hello));
    expect(error.message).toBe(
      'The OpenAI-compatible endpoint rejected the request (HTTP 400): Incorrect API key (key [redacted]) or [redacted] for that model',
    );
  });

  it('redacts the key from any other error message that quotes it', async () => {
    fake.enqueueError(400, { message: `Invalid header: Bearer ${KEY} is malformed; also saw sk-other-1234567890` });
    const error = await llmError(openai().converse(hello));
    expect(error.message).toBe(
      'The OpenAI-compatible endpoint rejected the request (HTTP 400): Invalid header: Bearer [redacted] is malformed; also saw [redacted]',
    );
  });

  it('times out an attempt after LLM_TIMEOUT_MS, retries, and gives up with kind timeout', async () => {
    fake.enqueue({ kind: 'delay', ms: 2_000, then: openAiReply.text('too late') }).enqueueText('in time');
    expect((await openai({ LLM_TIMEOUT_MS: '200' }).converse(hello)).message.content).toEqual([{ type: 'text', text: 'in time' }]);
    expect(fake.received).toHaveLength(2);

    fake.reset();
    fake.defaultReply = { kind: 'delay', ms: 2_000, then: openAiReply.text('too late') };
    // The fake would answer after 2 s: an error at all means the 200 ms timeout cut both attempts (how soon: npm run bench -- llm).
    const error = await llmError(openai({ LLM_TIMEOUT_MS: '200', LLM_MAX_ATTEMPTS: '2' }).converse(hello));
    expect(error).toMatchObject({ kind: 'timeout', message: 'The OpenAI-compatible endpoint did not answer within 0.2 s (gave up after 2 attempts)' });
    expect(fake.received).toHaveLength(2);
  });

  it('ends by the request deadline: an attempt gets only the time left, and no retry waits past it', async () => {
    // Retry-After 20 s with 5 s left: not waited for.
    fake.enqueueError(429, { retryAfter: '20' }).enqueueText('too late');
    const throttled = await llmError(openai().converse({ ...hello, deadline: Date.now() + 5_000 }));
    expect(throttled).toMatchObject({ kind: 'throttled', message: expect.stringMatching(/\(no time left to try again\)$/) });
    expect(fake.received).toHaveLength(1);

    // A slow answer with 300 ms left: cut at the deadline (LLM_TIMEOUT_MS is 60 s), the retry not made.
    fake.reset();
    fake.defaultReply = { kind: 'delay', ms: 2_000, then: openAiReply.text('too late') };
    const slow = await llmError(openai().converse({ ...hello, deadline: Date.now() + 300 }));
    expect(slow.kind).toBe('timeout');
    expect(slow.message).toMatch(/^The OpenAI-compatible endpoint did not answer within 0\.(2|3) s \(no time left to try again\)$/);
    expect(fake.received).toHaveLength(1);
  });

  it('reports a server nobody listens on as unavailable', async () => {
    const closed = await startFakeOpenAi();
    const baseUrl = closed.baseUrl;
    await closed.close();
    const error = await llmError(openai({ LLM_BASE_URL: baseUrl, LLM_MAX_ATTEMPTS: '2' }).converse(hello));
    expect(error).toMatchObject({
      kind: 'unavailable',
      message: 'The OpenAI-compatible endpoint could not be reached: connection failed (ECONNREFUSED) (gave up after 2 attempts)',
    });
  });

  it('does not follow redirects', async () => {
    fake.enqueue({ kind: 'raw', status: 307, body: '', headers: { location: 'https://evil.example/v1/chat/completions' } });
    expect(await llmError(openai().converse(hello))).toMatchObject({ kind: 'bad_request', status: 307 });
    expect(fake.received).toHaveLength(1);
  });

  it('surfaces what OpenAI refuses in a malformed loop (an unanswered tool call) as bad_request', async () => {
    const error = await llmError(
      openai().converse({
        messages: [
          hello.messages[0]!,
          { role: 'assistant', content: [{ type: 'tool_use', id: 'call_x', name: 'fleet_query', input: {} }] },
          { role: 'user', content: [{ type: 'text', text: 'never mind' }] },
        ],
      }),
    );
    expect(error.kind).toBe('bad_request');
    expect(error.message).toContain('The following tool_call_ids did not have response messages: call_x');
  });
});

describe('scripting the fake for an agentic loop', () => {
  it('runs 13 tool rounds with a malformed call among them, with exact usage per round', async () => {
    const provider = openai();
    fake.enqueue(
      ...Array.from({ length: 13 }, (_, i) =>
        i === 5 ? openAiReply.malformedToolCall('fleet_query', '{"round": 6') : openAiReply.toolUse('fleet_query', { round: i + 1 }),
      ),
    );
    fake.enqueueText('done', { usage: { input_tokens: 5000, output_tokens: 100 } });
    fake.defaultUsage = { input_tokens: 300, output_tokens: 30 };
    const request: ChatRequest = { tools: [fleetQuery], messages: [...hello.messages] };
    let total = 0;
    const errors: string[] = [];
    for (;;) {
      const answer = await provider.converse(request);
      total += answer.usage.total_tokens;
      request.messages.push(answer.message);
      if (answer.stop_reason !== 'tool_use') break;
      const results = answer.message.content.flatMap((block) => {
        if (block.type !== 'tool_use') return [];
        if (block.input_error) errors.push(block.id);
        return [{ type: 'tool_result' as const, tool_use_id: block.id, content: block.input_error ?? 'ok', is_error: Boolean(block.input_error) }];
      });
      request.messages.push({ role: 'user', content: results });
    }
    expect(total).toBe(13 * 330 + 5100);
    expect(errors).toEqual(['call_6']);
    expect(fake.answered()).toHaveLength(14);
    expect(fake.received.every((r) => r.rejected === undefined)).toBe(true);
  });
});
