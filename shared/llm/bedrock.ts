// Amazon Bedrock Converse (REFERENCE.md) behind the neutral LlmProvider:
// ChatRequest → ConverseCommand input, Converse output → ChatResponse, SDK
// errors → LlmError. The SDK is imported on the first call only, so Lambdas
// that never talk to a model do not load it. The SDK reads every answer whole:
// its stream collector here stops at ANSWER_MAX_BYTES, as the OpenAI client does.
import type {
  BedrockRuntimeClient,
  ContentBlock as BedrockBlock,
  ConverseCommandInput,
  ConverseCommandOutput,
  Message as BedrockMessage,
  ToolUseBlock,
} from '@aws-sdk/client-bedrock-runtime';
import { AnswerTooLarge, boundedBytes, retryAfterMs } from '../http/outbound.js';
import { redactCredentials } from '../http/redact.js';
import { createLogger } from '../log.js';
import { wellFormed } from '../text.js';
import { AttemptFailed, withRetries, type RetryPolicy } from './retry.js';
import {
  ANSWER_MAX_BYTES,
  LlmError,
  cachedTokens,
  estimatedTokens,
  tokenUsage,
  wireToolName,
  type ChatRequest,
  type ChatResponse,
  type ContentBlock,
  type LlmProvider,
  type StopReason,
  type TokenUsage,
} from './types.js';

export interface BedrockConfig {
  model: string;
  /** Default: the SDK's (AWS_REGION on Lambda). */
  region?: string;
  /** Default: the SDK's (AWS_ENDPOINT_URL_BEDROCK_RUNTIME, else the regional endpoint). */
  endpoint?: string;
  retry: RetryPolicy;
}

const LABEL = 'Bedrock';
/** The SDK's JSON document type (tool schemas and tool inputs). */
type Json = NonNullable<ToolUseBlock['input']>;
const MAX_DETAIL = 300;
const log = createLogger('bedrock');

export function bedrockProvider(config: BedrockConfig): LlmProvider {
  return {
    name: 'bedrock',
    model: config.model,
    async converse(request: ChatRequest): Promise<ChatResponse> {
      const started = performance.now();
      const input = converseInput(config.model, request);
      const { client, ConverseCommand } = await sdk(config);
      const output = await withRetries(
        config.retry,
        LABEL,
        async (signal) => {
          try {
            return await client.send(new ConverseCommand(input), { abortSignal: signal });
          } catch (error) {
            throw failure(error);
          }
        },
        request.deadline,
      );
      return { ...chatResponse(output, input), latency_ms: Math.round(performance.now() - started), model: config.model };
    },
  };
}

type Sdk = typeof import('@aws-sdk/client-bedrock-runtime');
const clients = new Map<string, Promise<{ client: BedrockRuntimeClient; ConverseCommand: Sdk['ConverseCommand'] }>>();

/** One client per region/endpoint per container, shared by every provider built from the same settings. */
function sdk(config: BedrockConfig) {
  const key = `${config.region ?? ''}|${config.endpoint ?? ''}`;
  let loaded = clients.get(key);
  if (!loaded) {
    loaded = import('@aws-sdk/client-bedrock-runtime').then(({ BedrockRuntimeClient, ConverseCommand }) => ({
      // maxAttempts 1: withRetries() is the only retry loop (no retries multiplied by retries).
      client: new BedrockRuntimeClient({
        maxAttempts: 1,
        // Every body the SDK reads (answers and error answers) goes through its stream collector.
        streamCollector: (body: AsyncIterable<Uint8Array>) => boundedBytes(body, ANSWER_MAX_BYTES),
        ...(config.region ? { region: config.region } : {}),
        ...(config.endpoint ? { endpoint: config.endpoint } : {}),
      }),
      ConverseCommand,
    }));
    loaded.catch(() => clients.delete(key));
    clients.set(key, loaded);
  }
  return loaded;
}

/** The ConverseCommand input for a neutral request (exported for tests and logging). */
export function converseInput(modelId: string, request: ChatRequest): ConverseCommandInput {
  const input: ConverseCommandInput = {
    modelId,
    messages: request.messages.map((message): BedrockMessage => ({ role: message.role, content: message.content.flatMap(toBedrockBlock) })),
  };
  if (request.system) input.system = [{ text: request.system }];
  // Omitted rather than empty: Bedrock rejects an empty tools list.
  if (request.tools?.length) {
    input.toolConfig = {
      tools: request.tools.map((tool) => ({
        toolSpec: { name: tool.name, description: tool.description, inputSchema: { json: tool.input_schema as Json } },
      })),
    };
  }
  if (request.max_tokens !== undefined || request.temperature !== undefined) {
    input.inferenceConfig = {
      ...(request.max_tokens !== undefined ? { maxTokens: request.max_tokens } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    };
  }
  return input;
}

function toBedrockBlock(block: ContentBlock): BedrockBlock[] {
  switch (block.type) {
    case 'text':
      // Bedrock refuses blank text blocks ("text field is blank"); they carry nothing anyway.
      return block.text.trim() ? [{ text: block.text }] : [];
    case 'tool_use':
      // A call whose arguments could not be parsed (input null) is sent back as an empty object.
      return [
        {
          toolUse: {
            toolUseId: block.id,
            name: wireToolName(block.name),
            input: (isObject(block.input) ? block.input : {}) as Json,
          },
        },
      ];
    case 'tool_result':
      // `status` only when it says something: not every model on Bedrock accepts the field.
      // Blank text is refused here too, so an empty result says so.
      return [
        {
          toolResult: {
            toolUseId: block.tool_use_id,
            content: [{ text: block.content || '(empty)' }],
            ...(block.is_error ? { status: 'error' as const } : {}),
          },
        },
      ];
  }
}

function chatResponse(output: ConverseCommandOutput, input: ConverseCommandInput): Omit<ChatResponse, 'latency_ms' | 'model'> {
  const message = output.output?.message;
  if (!message || !Array.isArray(message.content)) throw new LlmError(`${LABEL} answered without a message`, 'bad_response', undefined, paidFor(output));
  const content: ContentBlock[] = [];
  for (const block of message.content) {
    if (typeof block.text === 'string') content.push({ type: 'text', text: block.text });
    else if (block.toolUse) {
      const { toolUseId, name, input } = block.toolUse;
      if (!toolUseId || !name) throw new LlmError(`${LABEL} answered with a tool call without an id or name`, 'bad_response', undefined, paidFor(output));
      content.push(
        isObject(input)
          ? { type: 'tool_use', id: toolUseId, name, input }
          : { type: 'tool_use', id: toolUseId, name, input: null, input_error: 'the tool input is not a JSON object' },
      );
    }
    // Other blocks (reasoning, citations, …) have no neutral form: left out.
  }
  // The SDK parsed the answer itself: a lone surrogate it escaped becomes U+FFFD here, as parseJson makes it (shared/http/README.md).
  const usage = output.usage ? usageOf(output.usage) : estimatedUsage(input, content);
  return { message: { role: 'assistant', content: wellFormed(content) }, stop_reason: stopReason(output.stopReason), usage };
}

/**
 * An answer without usage (Bedrock always sends it; a Bedrock-compatible proxy reached through
 * AWS_ENDPOINT_URL_BEDROCK_RUNTIME may not): estimated from characters as the OpenAI client does, and logged,
 * where it was recorded as 0 tokens and $0 and a person's daily chat budget never bound.
 */
function estimatedUsage(input: ConverseCommandInput, content: ContentBlock[]): TokenUsage {
  const requestChars = JSON.stringify(input).length;
  const answerChars = content.reduce(
    (n, block) =>
      n + (block.type === 'text' ? block.text.length : block.type === 'tool_use' ? block.name.length + JSON.stringify(block.input ?? {}).length : 0),
    0,
  );
  log.warn('Bedrock reported no token usage: estimated from characters', { requestChars, answerChars });
  const estimate = estimatedTokens(requestChars, answerChars);
  return tokenUsage(LABEL, estimate.input, estimate.output);
}

/** The usage of an answer we cannot use, when it reads: the call is billed, so it is recorded (recordedCall). */
function paidFor(output: ConverseCommandOutput): TokenUsage | undefined {
  try {
    return output.usage ? usageOf(output.usage) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Bedrock's inputTokens leaves out the tokens read from and written to the prompt cache (its
 * totalTokens counts them): they are added back, so input_tokens means every prompt token as
 * OpenAI's prompt_tokens does, and the two cache counts are the part of it priced apart.
 */
function usageOf(usage: ConverseCommandOutput['usage']): TokenUsage {
  const read = usage?.cacheReadInputTokens ?? 0;
  const write = usage?.cacheWriteInputTokens ?? 0;
  const reported = tokenUsage(LABEL, usage?.inputTokens, usage?.outputTokens, usage?.totalTokens); // each count bounded as sent
  const counts = tokenUsage(LABEL, reported.input_tokens + read + write, reported.output_tokens, usage?.totalTokens);
  return { ...counts, ...cachedTokens(LABEL, counts, read, write) };
}

function stopReason(reason: string | undefined): StopReason {
  // The model's context window ended the answer, not its output cap: cut all the same (a repair asks for less).
  if (reason === 'model_context_window_exceeded') return 'max_tokens';
  // A guardrail or the model's own filter ended it (the answer is then a guardrail's message, or nothing).
  if (reason === 'content_filtered' || reason === 'guardrail_intervened') return 'content_filtered';
  return reason === 'end_turn' || reason === 'tool_use' || reason === 'max_tokens' ? reason : 'other';
}

/** SDK error → classified attempt failure. Auth messages are not passed on: they name the account and role. */
function failure(error: unknown): unknown {
  const e = error as { name?: unknown; message?: unknown; $metadata?: { httpStatusCode?: number }; $response?: { headers?: Record<string, string> } };
  const status = e?.$metadata?.httpStatusCode;
  // Not retried: the same question would get the same answer. The message's first line only: the SDK appends a hint.
  if (error instanceof AnswerTooLarge) return new AttemptFailed(`${LABEL} answered with ${error.message.split('\n', 1)[0]}`, 'bad_response', status);
  // An error answer that is not Bedrock's JSON (a proxy's or load balancer's HTML page) has no type: the SDK
  // throws the parser's SyntaxError with the status, and "Bedrock is unavailable (SyntaxError, HTTP 503)" named
  // a fault of ours. Such an answer is told by its status alone.
  const unreadable = e?.name === 'SyntaxError';
  const name = typeof e?.name === 'string' && !unreadable ? e.name : 'Error';
  const kindOf = unreadable ? `HTTP ${status}` : `${name}, HTTP ${status}`;
  // No HTTP status: the request never got an answer (network, credentials, abort).
  if (status === undefined) {
    if (name === 'CredentialsProviderError') return new AttemptFailed(`${LABEL}: no AWS credentials are available to sign the request`, 'auth');
    // The SDK found no region (none in the environment or the AWS profile): a setting, which no retry mends.
    if (typeof e.message === 'string' && e.message.startsWith('Region is missing'))
      return new AttemptFailed(`${LABEL}: no AWS region is set: set AWS_REGION (or a region in the AWS profile)`, 'bad_request');
    return error; // withRetries() classifies it as a timeout or a network failure
  }
  // A 2xx the SDK could not read (not JSON, wrong shape).
  if (status >= 200 && status < 300) return new AttemptFailed(`${LABEL} answered with something that is not a Converse response`, 'bad_response', status);
  // A proxy in front of Bedrock may quote the request's signature (Credential=, Signature=, a session token): cut out.
  const detail = typeof e.message === 'string' && e.message ? `: ${redactCredentials(e.message).slice(0, MAX_DETAIL)}` : '';
  const retryAfter = retryAfterMs((header) => e.$response?.headers?.[header]);
  switch (name) {
    case 'ThrottlingException':
    case 'ModelNotReadyException':
      // Bedrock's message tells a passing burst ("Too many requests") from a quota ("Too many tokens per day"), which
      // no retry within the call mends: the operator needs it to know whether to wait or ask for a higher quota.
      return new AttemptFailed(`${LABEL} is throttling requests (${name})${detail}`, 'throttled', status, { retryAfterMs: retryAfter });
    case 'ModelTimeoutException':
      return new AttemptFailed(`${LABEL}: the model took too long to answer (${name})`, 'timeout', status);
    case 'AccessDeniedException':
    case 'UnrecognizedClientException':
    case 'InvalidSignatureException':
    case 'ExpiredTokenException':
    case 'MissingAuthenticationTokenException':
      return new AttemptFailed(
        `${LABEL} refused the request (${name}): check the AWS credentials, the bedrock:InvokeModel permission and model access`,
        'auth',
        status,
      );
    case 'ValidationException':
    case 'ResourceNotFoundException':
    case 'ServiceQuotaExceededException':
    case 'ConflictException':
      return new AttemptFailed(`${LABEL} rejected the request (${name})${detail}`, 'bad_request', status);
    case 'ModelErrorException':
      return new AttemptFailed(`${LABEL}: the model failed to process the request (${name})${detail}`, 'bad_response', status);
  }
  if (status === 429)
    return new AttemptFailed(`${LABEL} is throttling requests (${unreadable ? 'HTTP 429' : name})`, 'throttled', status, { retryAfterMs: retryAfter });
  if (status >= 500) return new AttemptFailed(`${LABEL} is unavailable (${kindOf})`, 'unavailable', status, { retryAfterMs: retryAfter });
  return new AttemptFailed(`${LABEL} rejected the request (${kindOf})${unreadable ? '' : detail}`, 'bad_request', status);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
