// OpenAI-compatible chat completions (REFERENCE.md) behind the neutral
// LlmProvider: POST {base}/v1/chat/completions. Works with OpenAI itself and
// with compatible servers (vLLM, Ollama, llama.cpp, LiteLLM, …).
//
// Two differences from the neutral shape shape the mapping:
// - tool results are separate `tool` messages, not blocks of a user message;
// - tool-call arguments are a JSON string the model wrote, so they may be
//   broken: such a call comes back with `input: null` and `input_error`, never
//   as a thrown error, so the caller can tell the model and carry on.
import type { ReasoningEffort } from '../config/llm.js';
import * as z from '../zod.js';
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
  type Message,
  type StopReason,
  type TokenUsage,
} from './types.js';
import { AnswerTooLarge, boundedText, parseJson, retryAfterMs } from '../http/outbound.js';
import { redactCredentials } from '../http/redact.js';
import { createLogger } from '../log.js';

export interface OpenAiConfig {
  model: string;
  /** Without the /v1 suffix and without a trailing slash, e.g. https://api.openai.com */
  baseUrl: string;
  /** Resolved per call (Secrets Manager on AWS); undefined: no Authorization header (local servers). */
  apiKey: () => Promise<string | undefined>;
  retry: RetryPolicy;
  /** LLM_REASONING_EFFORT: sent to a reasoning model on OpenAI's API only (the others refuse the field). */
  reasoningEffort?: ReasoningEffort;
}

const LABEL = 'The OpenAI-compatible endpoint';
const log = createLogger('openai');
const MAX_DETAIL = 300;

export function openAiProvider(config: OpenAiConfig): LlmProvider {
  const url = `${config.baseUrl}/v1/chat/completions`;
  return {
    name: 'openai',
    model: config.model,
    async converse(request: ChatRequest): Promise<ChatResponse> {
      const started = performance.now();
      const key = await config.apiKey();
      const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json' };
      if (key) headers.Authorization = `Bearer ${key}`;
      const body = JSON.stringify(chatCompletionBody(config.model, request, isOpenAi(config.baseUrl), config.reasoningEffort));
      const completion = await withRetries(
        config.retry,
        LABEL,
        async (signal) => {
          // Redirects are not followed: a POST must not wander off with the key.
          const response = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal });
          const text = await boundedText(response, ANSWER_MAX_BYTES).catch((error: unknown) => {
            if (error instanceof AnswerTooLarge) throw new LlmError(`${LABEL} answered with ${error.message}`, 'bad_response');
            throw error;
          });
          if (response.ok) return parseCompletion(text, body.length);
          throw httpFailure(response.status, text, (name) => response.headers.get(name) ?? undefined, key);
        },
        request.deadline,
      );
      // The configured name, not the dated one OpenAI reports (gpt-4o-mini-2024-07-18): the ledger prices by it.
      return { ...completion, latency_ms: Math.round(performance.now() - started), model: config.model };
    },
  };
}

// ---- request ----

export interface OpenAiToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type OpenAiMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: OpenAiToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ChatCompletionBody {
  model: string;
  messages: OpenAiMessage[];
  tools?: { type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } }[];
  max_tokens?: number;
  /** OpenAI's own name for the cap (isOpenAi). */
  max_completion_tokens?: number;
  /** How much a reasoning model reasons (LLM_REASONING_EFFORT), on OpenAI's own API. */
  reasoning_effort?: ReasoningEffort;
  temperature?: number;
}

/**
 * OpenAI's own API (and Azure's, under each of the host names an Azure OpenAI or AI Foundry resource
 * shows): its reasoning models (o-series, gpt-5) refuse `max_tokens` ("use max_completion_tokens"),
 * which every model there takes. Other compatible servers get `max_tokens`, which is what they all
 * read (some know no other).
 */
export const isOpenAi = (baseUrl: string) =>
  /^https:\/\/(api\.openai\.com|[a-z0-9-]+\.(openai\.azure\.com|cognitiveservices\.azure\.com|services\.ai\.azure\.com))(\/|$)/i.test(baseUrl);

/**
 * OpenAI's reasoning models (o1, o3, o4-mini, gpt-5 and its kin) count their hidden reasoning in
 * `max_completion_tokens`: a cap sized for the visible answer (a patrol's 4,096, a chat turn's 2,048)
 * could be spent reasoning, and the answer came back empty and cut. On OpenAI's own API such a model
 * gets this much more: the cap then bounds reasoning and answer together. Told by the model's name,
 * the one thing the request knows (an Azure deployment named otherwise gets the caller's cap).
 */
export const REASONING_ALLOWANCE = 16_384;
// gpt-5's chat models do not reason, and take at most 16,384 output tokens: the allowance would be refused.
// A fine-tuned model is named `ft:<base model>:<org>::<id>`: its base decides.
export const isReasoningModel = (model: string) => /^(ft:)?(o\d|gpt-5)/i.test(model) && !/-chat\b/i.test(model);

/**
 * The request body for a neutral request (exported for tests); `openAi`: the cap as OpenAI's own API names it,
 * and a reasoning model's effort when one is configured.
 */
export function chatCompletionBody(model: string, request: ChatRequest, openAi = false, reasoningEffort?: ReasoningEffort): ChatCompletionBody {
  const messages: OpenAiMessage[] = [];
  if (request.system) messages.push({ role: 'system', content: request.system });
  for (const message of request.messages) messages.push(...toOpenAi(message));
  const body: ChatCompletionBody = { model, messages };
  // Omitted rather than empty: some compatible servers reject `tools: []`.
  if (request.tools?.length) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.input_schema },
    }));
  }
  if (request.max_tokens !== undefined) {
    if (!openAi) body.max_tokens = request.max_tokens;
    else body.max_completion_tokens = request.max_tokens + (isReasoningModel(model) ? REASONING_ALLOWANCE : 0);
  }
  if (openAi && reasoningEffort && isReasoningModel(model)) body.reasoning_effort = reasoningEffort;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  return body;
}

function toOpenAi(message: Message): OpenAiMessage[] {
  const texts = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : []));
  if (message.role === 'assistant') {
    const calls = message.content.flatMap((block): OpenAiToolCall[] =>
      block.type === 'tool_use'
        ? [{ id: block.id, type: 'function', function: { name: wireToolName(block.name), arguments: JSON.stringify(block.input ?? {}) } }]
        : [],
    );
    if (calls.length === 0) return [{ role: 'assistant', content: texts.join('\n\n') }];
    // Only tool calls: content null, as OpenAI itself sends it.
    return [{ role: 'assistant', content: texts.length ? texts.join('\n\n') : null, tool_calls: calls }];
  }
  // Tool messages first, in order: OpenAI wants them right after the assistant's tool calls.
  const results = message.content.flatMap((block): OpenAiMessage[] =>
    block.type === 'tool_result'
      ? [{ role: 'tool', tool_call_id: block.tool_use_id, content: block.is_error ? `Error: ${block.content}` : block.content }]
      : [],
  );
  return texts.length || results.length === 0 ? [...results, { role: 'user', content: texts.join('\n\n') }] : results;
}

// ---- answer ----

// Some compatible servers (a gateway, a proxy) leave usage out: estimated then (estimatedUsage).
// Checked by tokenUsage (types.ts) with Bedrock's: a count out of bounds is bad_response too.
// prompt_tokens includes the cached_tokens (OpenAI bills them at its cached-input rate).
const Usage = z.lazy(() =>
  z.object({
    prompt_tokens: z.number(),
    completion_tokens: z.number(),
    total_tokens: z.optional(z.number()),
    prompt_tokens_details: z.nullish(z.object({ cached_tokens: z.nullish(z.number()) })),
  }),
);

const Completion = z.lazy(() =>
  z.object({
    choices: z
      .array(
        z.object({
          message: z.object({
            // A string, or (some compatible servers) OpenAI's array of content parts.
            content: z.nullish(z.union([z.string(), z.array(z.object({ type: z.string(), text: z.nullish(z.string()) }))])),
            // Set (content null) when the model declines: its words are the answer a person reads.
            refusal: z.nullish(z.string()),
            tool_calls: z.nullish(
              z.array(
                z.object({
                  id: z.nullish(z.string()),
                  // A JSON string as OpenAI sends it, or (some compatible servers) the object itself.
                  function: z.object({
                    name: z.string().check(z.minLength(1)),
                    arguments: z.nullish(z.union([z.string(), z.record(z.string(), z.unknown())])),
                  }),
                }),
              ),
            ),
          }),
          finish_reason: z.nullish(z.string()),
        }),
      )
      .check(z.minLength(1)),
    usage: z.nullish(Usage),
  }),
);

/** An answer without usage: its tokens estimated from characters (estimatedTokens), and logged as estimated. */
function estimatedUsage(requestChars: number, answerChars: number): { prompt_tokens: number; completion_tokens: number } {
  log.warn('the OpenAI-compatible endpoint reported no token usage: estimated from characters', { requestChars, answerChars });
  const { input, output } = estimatedTokens(requestChars, answerChars);
  return { prompt_tokens: input, completion_tokens: output };
}

function parseCompletion(text: string, requestChars: number): Omit<ChatResponse, 'latency_ms' | 'model'> {
  const json = parseJson(text);
  const parsed = Completion.safeParse(json);
  if (!parsed.success) throw new LlmError(`${LABEL} answered with something that is not a chat completion`, 'bad_response', undefined, reportedUsage(json));
  const { choices, usage } = parsed.data;
  const choice = choices[0]!;
  const content: ContentBlock[] = [];
  const said = choice.message.content;
  const words = typeof said === 'string' ? said : (said ?? []).map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join('');
  const refusal = choice.message.refusal;
  if (words || refusal) content.push({ type: 'text', text: words || refusal! });
  (choice.message.tool_calls ?? []).forEach((call, i) => {
    // Some local servers send no id; the caller needs one to answer the call.
    const args = call.function.arguments;
    const input = typeof args === 'object' && args !== null ? { input: args } : toolInput(args);
    content.push({ type: 'tool_use', id: call.id || `call_${i + 1}`, name: call.function.name, ...input });
  });
  const reported =
    usage ??
    estimatedUsage(
      requestChars,
      (words || refusal || '').length + (choice.message.tool_calls ?? []).reduce((n, call) => n + JSON.stringify(call.function).length, 0),
    );
  const counts = tokenUsage(LABEL, reported.prompt_tokens, reported.completion_tokens, usage?.total_tokens);
  return {
    message: { role: 'assistant', content },
    stop_reason: stopReason(
      choice.finish_reason,
      content.some((block) => block.type === 'tool_use'),
    ),
    usage: { ...counts, ...cachedTokens(LABEL, counts, usage?.prompt_tokens_details?.cached_tokens ?? 0) },
  };
}

/** The usage an answer we cannot use reports, when it can be read: the call is billed, so it is recorded (recordedCall). */
function reportedUsage(json: unknown): TokenUsage | undefined {
  const usage = Usage.safeParse((json as { usage?: unknown } | null)?.usage);
  if (!usage.success) return undefined;
  try {
    const counts = tokenUsage(LABEL, usage.data.prompt_tokens, usage.data.completion_tokens, usage.data.total_tokens);
    return { ...counts, ...cachedTokens(LABEL, counts, usage.data.prompt_tokens_details?.cached_tokens ?? 0) };
  } catch {
    return undefined; // counts out of bounds: nothing trustworthy to record
  }
}

/** The parsed arguments, or input null with the reason they cannot be used. */
export function toolInput(args: string | null | undefined): { input: unknown; input_error?: string } {
  // No arguments at all is how some servers call a tool without parameters.
  if (args === null || args === undefined || args.trim() === '') return { input: {} };
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch (error) {
    const reason = error instanceof Error ? error.message.slice(0, 120) : 'unreadable';
    return { input: null, input_error: `The tool arguments are not valid JSON (${reason}); send a JSON object matching the tool's input schema.` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    return { input: null, input_error: `The tool arguments must be a JSON object, got ${got}; send a JSON object matching the tool's input schema.` };
  }
  return { input: value };
}

function stopReason(finish: string | null | undefined, hasToolCalls: boolean): StopReason {
  // Some compatible servers say "stop" while calling tools: the calls decide.
  if (hasToolCalls && (finish === 'tool_calls' || finish === 'function_call' || finish === 'stop' || !finish)) return 'tool_use';
  if (finish === 'stop') return 'end_turn';
  if (finish === 'length') return 'max_tokens';
  // Azure OpenAI's (and OpenAI's) filter withheld or cut the answer: content null, or text ending where it struck.
  if (finish === 'content_filter') return 'content_filtered';
  return 'other';
}

// ---- errors ----

const ErrorBody = z.lazy(() =>
  z.object({
    error: z.object({ message: z.optional(z.string()), type: z.nullish(z.string()), code: z.nullish(z.union([z.string(), z.number()])) }),
  }),
);

function httpFailure(status: number, text: string, header: (name: string) => string | undefined, key: string | undefined): AttemptFailed {
  const body = ErrorBody.safeParse(parseJson(text));
  const said = body.success && body.data.error.message ? `: ${redact(body.data.error.message, key).slice(0, MAX_DETAIL)}` : '';
  // Auth refusals often quote the key (masked or not): never pass them on.
  if (status === 401 || status === 403) return new AttemptFailed(`${LABEL} refused the API key (HTTP ${status}): check LLM_API_KEY`, 'auth', status);
  if (status === 429) {
    // Out of credit is not a passing burst: retrying cannot help.
    const exhausted = body.success && body.data.error.code === 'insufficient_quota';
    return new AttemptFailed(`${LABEL} is rate-limiting requests (HTTP 429)${said}`, 'throttled', status, {
      retryable: !exhausted,
      retryAfterMs: retryAfterMs(header),
    });
  }
  if (status === 408) return new AttemptFailed(`${LABEL} timed out (HTTP 408)`, 'timeout', status);
  if (status >= 500) return new AttemptFailed(`${LABEL} is unavailable (HTTP ${status})${said}`, 'unavailable', status, { retryAfterMs: retryAfterMs(header) });
  if (status >= 300 && status < 400) return new AttemptFailed(`${LABEL} answered with a redirect (HTTP ${status}): check LLM_BASE_URL`, 'bad_request', status);
  return new AttemptFailed(`${LABEL} rejected the request (HTTP ${status})${said}`, 'bad_request', status);
}

/** The key (whole or in part), and anything shaped like a credential, out of a provider message. */
const redact = (message: string, key: string | undefined): string => redactCredentials(message, [key]);
