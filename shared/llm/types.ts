// The provider-neutral shape of one LLM call (DESIGN §10): messages made of
// text, tool calls and tool results; tools described by JSON Schema; a stop
// reason; token usage and latency. Bedrock Converse and OpenAI-compatible chat
// completions both map onto it (shared/llm/bedrock.ts, shared/llm/openai.ts).

export type ContentBlock =
  | { type: 'text'; text: string }
  /**
   * The model asks for a tool. `input` is the parsed arguments; when the
   * provider could not parse them (an OpenAI model's arguments that are not
   * JSON), `input` is null and `input_error` says why: the caller answers
   * with an error tool result instead of running the tool.
   */
  | { type: 'tool_use'; id: string; name: string; input: unknown; input_error?: string }
  /** The answer to a tool call, sent back in a `user` message. */
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean };

export interface Message {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the tool's input (an object schema). */
  input_schema: Record<string, unknown>;
}

export interface ChatRequest {
  system?: string;
  messages: Message[];
  tools?: ToolSpec[];
  max_tokens?: number;
  temperature?: number;
  /**
   * When the call must be over (epoch ms), retries included: each attempt gets at most the time
   * left, and a retry whose wait would pass it is not made (a route must answer inside its 29 s).
   */
  deadline?: number;
}

/** `content_filtered`: the provider's content filter (OpenAI's and Azure's `content_filter`, Bedrock's guardrails) ended the answer. */
export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'content_filtered' | 'other';

/**
 * Of a call's input_tokens, those the provider's prompt cache served (OpenAI's
 * prompt_tokens_details.cached_tokens, Bedrock's cacheReadInputTokens) or stored (Bedrock's
 * cacheWriteInputTokens): each absent when none. Billed at their own rates (README: cached tokens).
 */
export interface CachedTokens {
  cached_input_tokens?: number;
  cache_write_input_tokens?: number;
}

export interface TokenUsage extends CachedTokens {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

/**
 * The most tokens one call may report for its input, its output or their total. No model
 * reads or writes a billion tokens in a call, so a count beyond it (or negative, or not
 * whole) is a provider's bug: refused as bad_response rather than priced and recorded in
 * the ledger, whose sums must stay exact.
 */
export const TOKEN_COUNT_MAX = 1_000_000_000;

/**
 * The largest answer taken from a provider, error answers included. A completion of 4,096
 * tokens with tool calls is tens of KB; more than this is no answer, and reading it whole
 * could fill the Lambda's memory: refused as bad_response without reading the rest.
 */
export const ANSWER_MAX_BYTES = 8 * 1024 * 1024;

/** What both providers accept as a tool name; the model may have sent anything (`functions.run_sql`, `run_sql<|channel|>…`). */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/**
 * A tool call's name as sent back to the provider: the model's own, or `invalid_tool_name` when the
 * provider would refuse it (a 400 or ValidationException on every later turn). The call's result
 * already said there is no such tool.
 */
export const wireToolName = (name: string): string => (TOOL_NAME.test(name) ? name : 'invalid_tool_name');

/**
 * A provider's reported counts as TokenUsage, or throws bad_response naming `label`. The total recorded is input +
 * output whatever total the provider reported (checked for bounds as sent): a proxy's total of 5,000,000 beside 100 + 5
 * was stored as it came, and every token figure (ledger, KPIs, metrics) carried it for good.
 */
export function tokenUsage(label: string, input = 0, output = 0, reportedTotal = input + output): TokenUsage {
  const counts = [input, output, reportedTotal, input + output];
  if (!counts.every((n) => Number.isInteger(n) && n >= 0 && n <= TOKEN_COUNT_MAX))
    throw new LlmError(`${label} answered with token counts that are not whole numbers from 0 to ${TOKEN_COUNT_MAX.toLocaleString('en-US')}`, 'bad_response');
  return { input_tokens: input, output_tokens: output, total_tokens: input + output };
}

/** Characters of English text and JSON per token, roughly, as OpenAI's guidance puts it. */
const CHARS_PER_TOKEN = 4;

/**
 * Tokens estimated from characters, for an answer that reports no usage (a gateway or proxy that leaves it out):
 * counted as zero, the call cost $0 in the ledger, and a person's daily chat budget, which adds what calls cost,
 * never bound. The request's JSON (tool schemas included) stands for the prompt, the answer's text and tool
 * arguments for the completion. The provider logs that it estimated.
 */
export const estimatedTokens = (requestChars: number, answerChars: number) => ({
  input: Math.ceil(requestChars / CHARS_PER_TOKEN),
  output: Math.ceil(answerChars / CHARS_PER_TOKEN),
});

/**
 * A provider's reported cache counts as CachedTokens, or throws bad_response naming `label`: whole
 * numbers from 0 to TOKEN_COUNT_MAX, together at most the call's input_tokens (they are part of it),
 * as the other counts are checked (tokenUsage), so no provider's bug prices negative tokens.
 */
export function cachedTokens(label: string, usage: TokenUsage, read = 0, write = 0): CachedTokens {
  const whole = (n: number) => Number.isInteger(n) && n >= 0 && n <= TOKEN_COUNT_MAX;
  if (!whole(read) || !whole(write) || read + write > usage.input_tokens)
    throw new LlmError(`${label} answered with cached token counts that are not whole numbers within its input tokens`, 'bad_response');
  return { ...(read ? { cached_input_tokens: read } : {}), ...(write ? { cache_write_input_tokens: write } : {}) };
}

export interface ChatResponse {
  /** The assistant's message: text blocks and/or tool_use blocks. */
  message: Message;
  stop_reason: StopReason;
  usage: TokenUsage;
  /** Wall time of the call including retries, in milliseconds. */
  latency_ms: number;
  /** The model that answered (as configured, or as the provider reports it). */
  model: string;
}

export interface LlmProvider {
  readonly name: 'bedrock' | 'openai';
  readonly model: string;
  converse(request: ChatRequest): Promise<ChatResponse>;
}

export type LlmErrorKind = 'throttled' | 'timeout' | 'auth' | 'bad_request' | 'unavailable' | 'bad_response';

/** A provider call that failed for good (after retries where they apply). The message is safe to show; it never holds credentials. */
export class LlmError extends Error {
  constructor(
    message: string,
    readonly kind: LlmErrorKind,
    readonly status?: number,
    /** What the provider said an answer we could not use cost (bad_response): billed all the same, so recorded. */
    readonly paid?: TokenUsage,
  ) {
    super(message);
    this.name = 'LlmError';
  }
}
