// The Bedrock provider: the real @aws-sdk/client-bedrock-runtime against a
// local server speaking the Converse protocol (test/support/fake-bedrock.ts),
// pointed there by the SDK's standard AWS_ENDPOINT_URL_BEDROCK_RUNTIME.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { bedrockProvider } from '../../shared/llm/bedrock.js';
import { llmProvider } from '../../shared/llm/provider.js';
import { DEFAULT_RETRY } from '../../shared/llm/retry.js';
import { LlmError, type ChatRequest, type LlmProvider } from '../../shared/llm/types.js';
import { bedrockReply, startFakeBedrock, type BedrockReply, type FakeBedrock } from '../support/fake-bedrock.js';

const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const ACCESS_KEY_ID = 'AKIDFLEETHEALTHTEST1';
const SECRET_ACCESS_KEY = 'bedrock-secret-access-key-S3CRET-0123456789';

const fleetQuery = {
  name: 'fleet_query',
  description: 'Run a read-only SQL query over the fleet tables.',
  input_schema: { type: 'object', properties: { sql: { type: 'string' } }, required: ['sql'] },
};

let fake: FakeBedrock;

beforeAll(async () => {
  fake = await startFakeBedrock();
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => {
  fake.reset();
  // The SDK's default credential chain reads these from process.env.
  vi.stubEnv('AWS_ACCESS_KEY_ID', ACCESS_KEY_ID);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', SECRET_ACCESS_KEY);
  vi.stubEnv('AWS_SESSION_TOKEN', '');
});

afterEach(() => {
  vi.unstubAllEnvs();
});

function bedrock(overrides: NodeJS.ProcessEnv = {}): LlmProvider {
  const provider = llmProvider({
    LLM_PROVIDER: 'bedrock',
    LLM_MODEL: MODEL,
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL_BEDROCK_RUNTIME: fake.endpoint,
    LLM_RETRY_BASE_MS: '1',
    ...overrides,
  });
  expect(provider?.name).toBe('bedrock');
  return provider!;
}

const hello: ChatRequest = { messages: [{ role: 'user', content: [{ type: 'text', text: 'Which clusters are at risk?' }] }] };

/** The LlmError a failing converse() throws; its message must never carry the AWS credentials. */
async function llmError(calling: Promise<unknown>): Promise<LlmError> {
  const error = await calling.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LlmError);
  const message = (error as LlmError).message;
  for (const secret of [ACCESS_KEY_ID, SECRET_ACCESS_KEY]) expect(message).not.toContain(secret);
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
  it('sends system, tools, inference settings and a multi-turn conversation as Converse expects, signed with SigV4', async () => {
    await bedrock().converse({
      system: 'You are the fleet assistant.',
      tools: [fleetQuery, { name: 'open_issue', description: 'Open an issue.', input_schema: { type: 'object', properties: {} } }],
      max_tokens: 1024,
      temperature: 0.2,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Which clusters are at risk?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Let me check.' },
            { type: 'tool_use', id: 'tooluse_a', name: 'fleet_query', input: { sql: 'select 1' } },
            { type: 'tool_use', id: 'tooluse_b', name: 'open_issue', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'tooluse_a', content: '[{"cluster":"prod-db-1"}]' },
            { type: 'tool_result', tool_use_id: 'tooluse_b', content: 'permission denied', is_error: true },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'prod-db-1 is at risk.' }] },
        { role: 'user', content: [{ type: 'text', text: 'Why?' }] },
      ],
    });

    expect(fake.received).toHaveLength(1);
    const [request] = fake.received;
    expect(request!.rejected).toBeUndefined();
    expect(request!.path).toBe('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse');
    expect(request!.modelId).toBe(MODEL);
    expect(request!.headers.authorization).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${ACCESS_KEY_ID}/\\d{8}/us-east-1/bedrock/aws4_request`));
    expect(request!.body).toEqual({
      system: [{ text: 'You are the fleet assistant.' }],
      toolConfig: {
        tools: [
          { toolSpec: { name: 'fleet_query', description: fleetQuery.description, inputSchema: { json: fleetQuery.input_schema } } },
          { toolSpec: { name: 'open_issue', description: 'Open an issue.', inputSchema: { json: { type: 'object', properties: {} } } } },
        ],
      },
      inferenceConfig: { maxTokens: 1024, temperature: 0.2 },
      messages: [
        { role: 'user', content: [{ text: 'Which clusters are at risk?' }] },
        {
          role: 'assistant',
          content: [
            { text: 'Let me check.' },
            { toolUse: { toolUseId: 'tooluse_a', name: 'fleet_query', input: { sql: 'select 1' } } },
            { toolUse: { toolUseId: 'tooluse_b', name: 'open_issue', input: {} } },
          ],
        },
        {
          role: 'user',
          content: [
            { toolResult: { toolUseId: 'tooluse_a', content: [{ text: '[{"cluster":"prod-db-1"}]' }] } },
            { toolResult: { toolUseId: 'tooluse_b', content: [{ text: 'permission denied' }], status: 'error' } },
          ],
        },
        { role: 'assistant', content: [{ text: 'prod-db-1 is at risk.' }] },
        { role: 'user', content: [{ text: 'Why?' }] },
      ],
    });
  });

  it('leaves out system, toolConfig and inferenceConfig when the request has none, and blank text blocks', async () => {
    await bedrock().converse({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Hi' },
            { type: 'text', text: '  ' },
          ],
        },
      ],
    });
    expect(fake.received[0]!.body).toEqual({ messages: [{ role: 'user', content: [{ text: 'Hi' }] }] });
  });
});

describe('answers', () => {
  it('maps a tool call and its answer round trip, with usage, stop reasons and latency', async () => {
    fake
      .enqueueToolUse([{ name: 'fleet_query', input: { sql: 'select count(*) from clusters' } }], {
        text: 'Counting clusters.',
        usage: { input_tokens: 1200, output_tokens: 45 },
      })
      .enqueueText('There are 42 clusters.', { usage: { input_tokens: 1300, output_tokens: 12, total_tokens: 1312 } });
    const provider = bedrock();
    const request: ChatRequest = { system: 'Be brief.', tools: [fleetQuery], messages: [...hello.messages] };

    const first = await provider.converse(request);
    expect(first).toMatchObject({
      message: {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Counting clusters.' },
          { type: 'tool_use', id: 'tooluse_1', name: 'fleet_query', input: { sql: 'select count(*) from clusters' } },
        ],
      },
      stop_reason: 'tool_use',
      usage: { input_tokens: 1200, output_tokens: 45, total_tokens: 1245 },
      model: MODEL,
    });
    expect(first.message.content[1]).not.toHaveProperty('input_error');
    expect(first.latency_ms).toBeGreaterThanOrEqual(0);

    // The loop appends the assistant message as returned and answers the call.
    request.messages.push(first.message, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tooluse_1', content: '42' }] });
    const second = await provider.converse(request);
    expect(second).toMatchObject({
      message: { role: 'assistant', content: [{ type: 'text', text: 'There are 42 clusters.' }] },
      stop_reason: 'end_turn',
      usage: { input_tokens: 1300, output_tokens: 12, total_tokens: 1312 },
    });
    expect(fake.received.map((r) => r.rejected)).toEqual([undefined, undefined]);
    expect(fake.received[1]!.body.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          { text: 'Counting clusters.' },
          { toolUse: { toolUseId: 'tooluse_1', name: 'fleet_query', input: { sql: 'select count(*) from clusters' } } },
        ],
      },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_1', content: [{ text: '42' }] } }] },
    ]);
  });

  it.each([
    ['end_turn', 'end_turn'],
    ['tool_use', 'tool_use'],
    ['max_tokens', 'max_tokens'],
    ['model_context_window_exceeded', 'max_tokens'],
    ['stop_sequence', 'other'],
    ['guardrail_intervened', 'content_filtered'],
    ['content_filtered', 'content_filtered'],
  ] as const)('maps stopReason %s to %s', async (stopReason, expected) => {
    fake.enqueueText('…', { stopReason });
    expect((await bedrock().converse(hello)).stop_reason).toBe(expected);
  });

  it('reports a tool input that is not an object as input_error instead of throwing', async () => {
    fake.enqueueToolUse({ name: 'fleet_query', input: ['select 1'] });
    const answer = await bedrock().converse({ ...hello, tools: [fleetQuery] });
    expect(answer.message.content).toEqual([
      { type: 'tool_use', id: 'tooluse_1', name: 'fleet_query', input: null, input_error: 'the tool input is not a JSON object' },
    ]);
  });

  it('counts the wall time of all attempts as latency', async () => {
    // performance.now() is faked and stands still, except while the first attempt is being answered: 5 s pass then.
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      fake
        .enqueue(() => {
          vi.advanceTimersByTime(5_000);
          return { kind: 'error', type: 'ThrottlingException' };
        })
        .enqueueText('ok');
      const answer = await bedrock().converse(hello);
      expect(answer.latency_ms).toBe(5_000);
      expect(fake.received).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('reaches the endpoint AWS_ENDPOINT_URL_BEDROCK_RUNTIME names through the SDK alone', async () => {
    vi.stubEnv('AWS_ENDPOINT_URL_BEDROCK_RUNTIME', fake.endpoint);
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    fake.enqueueText('from the fake');
    const provider = bedrockProvider({ model: MODEL, retry: { ...DEFAULT_RETRY, maxAttempts: 1 } });
    expect((await provider.converse(hello)).message.content).toEqual([{ type: 'text', text: 'from the fake' }]);
    expect(fake.received[0]!.headers.authorization).toContain('/eu-west-1/bedrock/aws4_request');
  });
});

describe('retries and errors', () => {
  it('retries throttling with backoff, then succeeds', async () => {
    fake.enqueueError('ThrottlingException').enqueueError('ModelNotReadyException').enqueueText('finally');
    const answer = await bedrock().converse(hello);
    expect(answer.message.content).toEqual([{ type: 'text', text: 'finally' }]);
    expect(fake.received).toHaveLength(3);
  });

  it('gives up after LLM_MAX_ATTEMPTS throttled attempts with kind throttled', async () => {
    fake.defaultReply = { kind: 'error', type: 'ThrottlingException' };
    const error = await llmError(bedrock({ LLM_MAX_ATTEMPTS: '3' }).converse(hello));
    expect(error).toMatchObject({ kind: 'throttled', status: 429 });
    expect(error.message).toBe(
      'Bedrock is throttling requests (ThrottlingException): Too many requests, please wait before trying again. (gave up after 3 attempts)',
    );
    expect(fake.received).toHaveLength(3);
  });

  it("says which limit throttled: a daily token quota is told from a burst by Bedrock's message", async () => {
    fake.defaultReply = { kind: 'error', type: 'ThrottlingException', message: 'Too many tokens per day, please wait before trying again.' };
    const error = await llmError(bedrock({ LLM_MAX_ATTEMPTS: '2' }).converse(hello));
    expect(error).toMatchObject({
      kind: 'throttled',
      message: 'Bedrock is throttling requests (ThrottlingException): Too many tokens per day, please wait before trying again. (gave up after 2 attempts)',
    });
  });

  it('honours Retry-After', async () => {
    fake.enqueueError('ThrottlingException', { retryAfter: '1' }).enqueueText('ok');
    // LLM_RETRY_BASE_MS is 1 here: a 1,000 ms wait before the retry can only come from Retry-After.
    const waits = await scheduledWaits(() => bedrock().converse(hello));
    expect(waits).toContain(1_000);
    expect(fake.received).toHaveLength(2);
  });

  it('retries 5xx and gives up with kind unavailable', async () => {
    fake.enqueueError('InternalServerException').enqueueError('ServiceUnavailableException').enqueueText('ok');
    expect((await bedrock().converse(hello)).message.content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(fake.received).toHaveLength(3);

    fake.reset();
    fake.defaultReply = { kind: 'error', type: 'ServiceUnavailableException' };
    const error = await llmError(bedrock({ LLM_MAX_ATTEMPTS: '2' }).converse(hello));
    expect(error).toMatchObject({ kind: 'unavailable', status: 503 });
    expect(fake.received).toHaveLength(2);
  });

  it("an error answer that is not Bedrock's JSON (a proxy's HTML page) is told by its status, not as the parser's SyntaxError", async () => {
    const page = (status: number): BedrockReply => ({
      kind: 'raw',
      status,
      body: '<html><body>Service Unavailable</body></html>',
      headers: { 'content-type': 'text/html' },
    });
    fake.defaultReply = page(503);
    const down = await llmError(bedrock({ LLM_MAX_ATTEMPTS: '2' }).converse(hello));
    expect(down).toMatchObject({ kind: 'unavailable', status: 503, message: 'Bedrock is unavailable (HTTP 503) (gave up after 2 attempts)' });
    fake.defaultReply = page(429);
    const throttled = await llmError(bedrock({ LLM_MAX_ATTEMPTS: '2' }).converse(hello));
    expect(throttled).toMatchObject({ kind: 'throttled', status: 429, message: 'Bedrock is throttling requests (HTTP 429) (gave up after 2 attempts)' });
    fake.defaultReply = page(413);
    const refused = await llmError(bedrock().converse(hello));
    expect(refused).toMatchObject({ kind: 'bad_request', status: 413, message: 'Bedrock rejected the request (HTTP 413)' });
  });

  it('does not retry a ValidationException and passes its message on', async () => {
    fake.enqueueError('ValidationException', { message: 'The model returned the following errors: prompt is too long' });
    const error = await llmError(bedrock().converse(hello));
    expect(error).toMatchObject({ kind: 'bad_request', status: 400 });
    expect(error.message).toBe('Bedrock rejected the request (ValidationException): The model returned the following errors: prompt is too long');
    expect(fake.received).toHaveLength(1);
  });

  it("cuts a quoted signature out of the message (a proxy's echo of the request's Authorization header)", async () => {
    const quoted = `Authorization: AWS4-HMAC-SHA256 Credential=${ACCESS_KEY_ID}/20261206/us-east-1/bedrock/aws4_request, SignedHeaders=host, Signature=${'ab12'.repeat(16)}; X-Amz-Security-Token: IQoJb3JpZ2luX2VjEXAMPLE`;
    fake.enqueueError('ValidationException', { message: `Malformed request header: ${quoted}` });
    const error = await llmError(bedrock().converse(hello));
    expect(error.message).toBe(
      'Bedrock rejected the request (ValidationException): Malformed request header: Authorization: AWS4-HMAC-SHA256 Credential=[redacted], SignedHeaders=host, Signature=[redacted]; X-Amz-Security-Token: [redacted]',
    );
  });

  it("records input + output as the total whatever total the answer reports (a proxy's 5,000,000 beside 100 + 5)", async () => {
    fake.enqueueText('ok', { usage: { input_tokens: 100, output_tokens: 5, total_tokens: 5_000_000 } });
    expect((await bedrock().converse(hello)).usage).toEqual({ input_tokens: 100, output_tokens: 5, total_tokens: 105 });
  });

  it('estimates the tokens of an answer that reports none (4 characters a token), so its cost and the chat budget still count', async () => {
    const answer = { output: { message: { role: 'assistant', content: [{ text: 'x'.repeat(400) }] } }, stopReason: 'end_turn' };
    fake.enqueue({ kind: 'raw', status: 200, body: JSON.stringify(answer), headers: { 'content-type': 'application/json' } });
    const { usage } = await bedrock().converse(hello);
    expect(usage.output_tokens).toBe(100);
    // The request's JSON (the SDK's own, near what was sent) stands for the prompt.
    expect(usage.input_tokens).toBeGreaterThan(JSON.stringify(hello.messages).length / 4);
    expect(usage.total_tokens).toBe(usage.input_tokens + 100);
  });

  it.each([
    ['AccessDeniedException', 403],
    ['UnrecognizedClientException', 403],
  ] as const)('reports %s as auth without retrying or naming the account', async (type, status) => {
    fake.enqueueError(type);
    const error = await llmError(bedrock().converse(hello));
    expect(error).toMatchObject({ kind: 'auth', status });
    expect(error.message).toContain(type);
    expect(error.message).not.toMatch(/arn:aws|123456789012|security token/);
    expect(fake.received).toHaveLength(1);
  });

  it('reports an unknown model as bad_request', async () => {
    fake.enqueueError('ResourceNotFoundException');
    expect(await llmError(bedrock().converse(hello))).toMatchObject({ kind: 'bad_request', status: 404 });
  });

  it('ends by the request deadline: the attempt is cut when it comes, and no retry is made', async () => {
    fake.defaultReply = { kind: 'delay', ms: 2_000, then: { kind: 'text', text: 'too late' } };
    const error = await llmError(bedrock().converse({ ...hello, deadline: Date.now() + 300 }));
    expect(error.kind).toBe('timeout');
    expect(error.message).toMatch(/^Bedrock did not answer within 0\.(2|3) s \(no time left to try again\)$/);
    expect(fake.received).toHaveLength(1);
  });

  it('takes a lone surrogate the answer escapes as U+FFFD, in text and in a tool input', async () => {
    fake.enqueueText('half \ud83d a rocket, whole \ud83d\ude80');
    expect((await bedrock().converse(hello)).message.content).toEqual([{ type: 'text', text: 'half \uFFFD a rocket, whole \u{1F680}' }]);
    fake.enqueue({ kind: 'tool_use', calls: [{ id: 'call-1', name: 'fleet_query', input: { sql: 'select \udc00' } }] });
    expect((await bedrock().converse({ ...hello, tools: [fleetQuery] })).message.content).toEqual([
      { type: 'tool_use', id: 'call-1', name: 'fleet_query', input: { sql: 'select \uFFFD' } },
    ]);
  });

  it('times out an attempt after LLM_TIMEOUT_MS, retries, and gives up with kind timeout', async () => {
    fake.enqueue({ kind: 'delay', ms: 2_000, then: { kind: 'text', text: 'too late' } }).enqueueText('in time');
    expect((await bedrock({ LLM_TIMEOUT_MS: '200' }).converse(hello)).message.content).toEqual([{ type: 'text', text: 'in time' }]);
    expect(fake.received).toHaveLength(2);

    fake.reset();
    fake.defaultReply = { kind: 'delay', ms: 2_000, then: { kind: 'text', text: 'too late' } };
    // The fake would answer after 2 s: an error at all means the 200 ms timeout cut both attempts (how soon: npm run bench -- llm).
    const error = await llmError(bedrock({ LLM_TIMEOUT_MS: '200', LLM_MAX_ATTEMPTS: '2' }).converse(hello));
    expect(error).toMatchObject({ kind: 'timeout' });
    expect(error.message).toBe('Bedrock did not answer within 0.2 s (gave up after 2 attempts)');
    expect(fake.received).toHaveLength(2);
  });

  it('reports an endpoint nobody listens on as unavailable', async () => {
    const closed = await startFakeBedrock();
    const endpoint = closed.endpoint;
    await closed.close();
    const error = await llmError(bedrock({ AWS_ENDPOINT_URL_BEDROCK_RUNTIME: endpoint, LLM_MAX_ATTEMPTS: '2' }).converse(hello));
    expect(error.kind).toBe('unavailable');
    expect(error.message).toMatch(/^Bedrock could not be reached: connection failed/);
  });

  it('reports a missing AWS region as a setting to make, at once, not as a network failure retried', async () => {
    // No region anywhere the SDK looks: not in the environment, nor in a profile (none is readable).
    for (const name of ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE']) vi.stubEnv(name, undefined);
    vi.stubEnv('AWS_CONFIG_FILE', '/nonexistent/aws-config');
    vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', '/nonexistent/aws-credentials');
    const provider = bedrockProvider({ model: MODEL, endpoint: fake.endpoint, retry: { ...DEFAULT_RETRY, baseDelayMs: 1, maxAttempts: 4 } });
    const error = await llmError(provider.converse(hello));
    expect(error.kind).toBe('bad_request');
    expect(error.message).toBe('Bedrock: no AWS region is set: set AWS_REGION (or a region in the AWS profile)'); // no "gave up after 4 attempts"
    expect(fake.received).toHaveLength(0);
  });

  it('reports an answer that is not JSON as bad_response without retrying', async () => {
    fake.enqueue({ kind: 'raw', status: 200, body: '<html>maintenance</html>' });
    expect(await llmError(bedrock().converse(hello))).toMatchObject({ kind: 'bad_response' });
    expect(fake.received).toHaveLength(1);
  });

  it.each([
    ['an answer', 200],
    ['an error answer', 500],
  ])('refuses %s that does not end at 8 MB as bad_response, stops reading it and does not retry', async (_, status) => {
    fake.enqueue({ kind: 'endless', status });
    expect(await llmError(bedrock().converse(hello))).toMatchObject({ kind: 'bad_response', message: 'Bedrock answered with more than 8 MB' });
    expect(fake.received).toHaveLength(1);
    // The client closed the stream: the fake wrote the 8 MB taken and what flow control let ahead, not its 256 MB.
    await vi.waitFor(() => expect(fake.received[0]!.streamedBytes).toBeDefined());
    expect(fake.received[0]!.streamedBytes).toBeGreaterThan(8 * 1024 * 1024);
    expect(fake.received[0]!.streamedBytes).toBeLessThan(24 * 1024 * 1024);
  });

  it('takes an answer of just under 8 MB', async () => {
    const answer = (text: string) =>
      JSON.stringify({
        output: { message: { role: 'assistant', content: [{ text }] } },
        stopReason: 'end_turn',
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      });
    const text = 'x'.repeat(8 * 1024 * 1024 - answer('').length);
    fake.enqueue({ kind: 'raw', status: 200, body: answer(text) });
    const response = await bedrock().converse(hello);
    expect(response.message.content).toEqual([{ type: 'text', text }]);
  });

  it('reports an answer without a message as bad_response', async () => {
    fake.enqueue({ kind: 'raw', status: 200, body: JSON.stringify({ stopReason: 'end_turn', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } }) });
    const error = await llmError(bedrock().converse(hello));
    expect(error).toMatchObject({ kind: 'bad_response', message: 'Bedrock answered without a message' });
    // Billed all the same: the usage travels with the error to the ledger (recordedCall).
    expect(error.paid).toEqual({ input_tokens: 1, output_tokens: 1, total_tokens: 2 });
  });

  it.each([
    ['beyond a billion', { inputTokens: 1_000_000_001, outputTokens: 1, totalTokens: 1_000_000_002 }],
    ['negative', { inputTokens: -5, outputTokens: 1, totalTokens: -4 }],
    ['not whole', { inputTokens: 1.5, outputTokens: 1, totalTokens: 2.5 }],
  ])('reports token counts %s as bad_response', async (_, usage) => {
    fake.enqueue({
      kind: 'raw',
      status: 200,
      body: JSON.stringify({ output: { message: { role: 'assistant', content: [{ text: 'hi' }] } }, stopReason: 'end_turn', usage }),
    });
    expect(await llmError(bedrock().converse(hello))).toMatchObject({
      kind: 'bad_response',
      message: 'Bedrock answered with token counts that are not whole numbers from 0 to 1,000,000,000',
    });
    expect(fake.received).toHaveLength(1);
  });

  it('adds the prompt cache reads and writes Bedrock reports apart from inputTokens to input_tokens, and names them', async () => {
    fake.enqueueText('cached', { usage: { input_tokens: 7, output_tokens: 227, cache_read_input_tokens: 1000, cache_write_input_tokens: 3324 } });
    expect((await bedrock().converse(hello)).usage).toEqual({
      input_tokens: 4331,
      output_tokens: 227,
      total_tokens: 4558, // Bedrock's totalTokens: it counts the cache tokens
      cached_input_tokens: 1000,
      cache_write_input_tokens: 3324,
    });
    fake.enqueueText('miss', { usage: { input_tokens: 50, output_tokens: 5, cache_read_input_tokens: 0, cache_write_input_tokens: 0 } });
    expect((await bedrock().converse(hello)).usage).toEqual({ input_tokens: 50, output_tokens: 5, total_tokens: 55 });
  });

  it('reports a negative cache count as bad_response', async () => {
    fake.enqueue({
      kind: 'raw',
      status: 200,
      body: JSON.stringify({
        output: { message: { role: 'assistant', content: [{ text: 'hi' }] } },
        stopReason: 'end_turn',
        usage: { inputTokens: 10, outputTokens: 1, totalTokens: 6, cacheReadInputTokens: -5 },
      }),
    });
    expect(await llmError(bedrock().converse(hello))).toMatchObject({
      kind: 'bad_response',
      message: 'Bedrock answered with cached token counts that are not whole numbers within its input tokens',
    });
  });

  it('surfaces what Bedrock refuses in a malformed loop (tool history without tools) as bad_request', async () => {
    const error = await llmError(
      bedrock().converse({
        messages: [
          hello.messages[0]!,
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'fleet_query', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'x' }] },
        ],
      }),
    );
    expect(error.kind).toBe('bad_request');
    expect(error.message).toContain('The toolConfig field must be defined');
  });
});

describe('scripting the fake for an agentic loop', () => {
  it('runs 13 tool rounds and a final answer, with exact usage per round and function replies', async () => {
    const provider = bedrock();
    fake.enqueue(
      ...Array.from({ length: 13 }, (_, i) => bedrockReply.toolUse('fleet_query', { round: i + 1 }, { input_tokens: 100 * (i + 1), output_tokens: 10 })),
    );
    // A function reply sees the request: here it echoes the last tool result.
    fake.enqueue((request) => ({ kind: 'text', text: `last result: ${request.body.messages.at(-1)!.content[0]!.toolResult!.content[0]!.text}` }));
    const request: ChatRequest = { tools: [fleetQuery], messages: [...hello.messages] };
    let inputTokens = 0;
    for (let round = 1; ; round += 1) {
      const answer = await provider.converse(request);
      inputTokens += answer.usage.input_tokens;
      request.messages.push(answer.message);
      if (answer.stop_reason !== 'tool_use') break;
      const results = answer.message.content.flatMap((block) =>
        block.type === 'tool_use' ? [{ type: 'tool_result' as const, tool_use_id: block.id, content: `rows for round ${round}` }] : [],
      );
      request.messages.push({ role: 'user', content: results });
    }
    expect(request.messages.at(-1)!.content).toEqual([{ type: 'text', text: 'last result: rows for round 13' }]);
    expect(inputTokens).toBe(100 * ((13 * 14) / 2) + fake.defaultUsage.input_tokens);
    expect(fake.answered()).toHaveLength(14);
    expect(fake.received.every((r) => r.rejected === undefined)).toBe(true);
  });
});
