// A local HTTP server speaking the OpenAI chat completions protocol, so the
// OpenAI-compatible provider (shared/llm/openai.ts) is tested over the wire.
//
// Wire: POST /v1/chat/completions with `Authorization: Bearer <key>` and a JSON
// body {model, messages, tools?, max_tokens?, temperature?}; the answer is
// {id, object:'chat.completion', model, choices:[{index:0, message:{role:
// 'assistant', content, tool_calls?}, finish_reason}], usage:{prompt_tokens,
// completion_tokens, total_tokens}}. Errors as OpenAI sends them: status and
// {error:{message, type, param, code}} (429 with a retry-after header when
// asked). Use `fake.baseUrl` as LLM_BASE_URL.
//
// Auth: with `apiKey` given, any other bearer gets 401 invalid_api_key whose
// message repeats the presented key in full (OpenAI masks most of it; some
// compatible servers do not), so tests prove the provider never echoes it.
// Without `apiKey`, like a local server, any or no Authorization is accepted.
//
// SCRIPTING. Every completion request takes the next reply from `script` (a
// FIFO queue); when it is empty, `defaultReply` answers (text "OK"). A reply is
// data or a function of the request:
//   fake.enqueueToolUse({ name: 'fleet_query', input: { sql: 'select 1' } }, { usage: { input_tokens: 900, output_tokens: 40 } })
//       .enqueueText('Two clusters are at risk.', { usage: { input_tokens: 1200, output_tokens: 80 } });
//   fake.enqueueMalformedToolCall('fleet_query', '{"sql": "select');      // arguments that are not JSON
//   fake.enqueueMalformedToolCall('fleet_query', '[1, 2]');               // JSON, but not an object
//   fake.enqueueError(429, { retryAfter: '1' }).enqueueError(500);        // failures, then the next reply
//   fake.enqueue({ kind: 'delay', ms: 5_000, then: { kind: 'text', text: 'late' } });   // provoke timeouts
//   fake.enqueue(...Array.from({ length: 13 }, (_, i) => openAiReply.toolUse('fleet_query', { round: i })));  // > 12 rounds
// Tool-call ids are deterministic: call_1, call_2, … in the order the fake hands
// them out (reset() restarts the count); pass `id` to choose one. A tool call
// with `arguments` sends that raw string instead of JSON.stringify(input).
// Token usage: per reply (`usage`), else `defaultUsage` ({input_tokens: 100,
// output_tokens: 20}) as prompt_tokens/completion_tokens; total_tokens is their
// sum unless `total_tokens` is given, so ledger costs can be asserted exactly;
// `cached_tokens` (part of input_tokens) adds prompt_tokens_details.cached_tokens.
//
// RECORDING. `received` holds every request in arrival order, including ones the
// fake refused (those have `rejected` set and consume no script entry): path,
// headers and the parsed body (typed as the provider sends it).
//
// STRICT (on by default). Before taking a reply the fake makes the checks
// OpenAI makes that an agentic loop can trip over, answering 400
// invalid_request_error like OpenAI: a `tool` message must answer a tool call
// of the assistant message before it, and every tool call of an assistant
// message must be answered by the `tool` messages right after it.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, vi } from 'vitest';
import { useTestTables } from './dynamo.js';

export interface FakeUsage {
  input_tokens: number;
  output_tokens: number;
  /** Default: input_tokens + output_tokens. */
  total_tokens?: number;
  /** Of input_tokens, those served from the prompt cache: sent as prompt_tokens_details.cached_tokens, as OpenAI does. */
  cached_tokens?: number;
}

export interface FakeToolCall {
  name: string;
  input?: unknown;
  /** Sent verbatim as function.arguments instead of JSON.stringify(input): for malformed arguments. */
  arguments?: string;
  /** Default: call_<n>. */
  id?: string;
}

export type OpenAiReply =
  /** A final answer: finish_reason stop unless given. */
  | { kind: 'text'; text: string; usage?: FakeUsage; finishReason?: string }
  /** One or more tool calls, optionally with some text: finish_reason tool_calls. */
  | { kind: 'tool_use'; calls: FakeToolCall[]; text?: string; usage?: FakeUsage; finishReason?: string }
  /** An OpenAI error body; type/code/message default from the status (429 rate_limit_exceeded, 500 server_error, …). */
  | { kind: 'error'; status: number; message?: string; type?: string; code?: string | null; retryAfter?: string }
  /** Waits, then answers `then` (unless the client gave up first). */
  | { kind: 'delay'; ms: number; then: OpenAiReply }
  /** Answers `then` once `until` settles: a race made to happen every run, not left to timing. */
  | { kind: 'held'; until: Promise<unknown>; then: OpenAiReply }
  /** Anything else, verbatim (e.g. a body that is not JSON). */
  | { kind: 'raw'; status: number; body: string; headers?: Record<string, string> }
  | ((request: ReceivedCompletion, index: number) => OpenAiReply);

export interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A message as the provider sends it. */
export interface WireMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: WireToolCall[];
  tool_call_id?: string;
}

/** The request body as the provider sends it (parsed JSON, not validated beyond the strict checks). */
export interface ChatCompletionWireBody {
  model: string;
  messages: WireMessage[];
  tools?: { type: 'function'; function: { name: string; description?: string; parameters?: Record<string, unknown> } }[];
  max_tokens?: number;
  temperature?: number;
  [other: string]: unknown;
}

export interface ReceivedCompletion {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: ChatCompletionWireBody;
  /** Set when the fake refused the request itself (auth, path, strict check): the reason. */
  rejected?: string;
}

export interface FakeOpenAiOptions {
  /** The bearer key to require; undefined: accept any or none (a local server). */
  apiKey?: string;
}

export interface FakeOpenAi {
  /** http://127.0.0.1:PORT, for LLM_BASE_URL. */
  baseUrl: string;
  received: ReceivedCompletion[];
  /** Replies still to give, first first. Mutable. */
  script: OpenAiReply[];
  /** Answers when the script is empty. */
  defaultReply: OpenAiReply;
  defaultUsage: FakeUsage;
  strict: boolean;
  enqueue(...replies: OpenAiReply[]): FakeOpenAi;
  enqueueText(text: string, options?: { usage?: FakeUsage; finishReason?: string }): FakeOpenAi;
  enqueueToolUse(calls: FakeToolCall | FakeToolCall[], options?: { text?: string; usage?: FakeUsage }): FakeOpenAi;
  /** A tool call whose function.arguments is `rawArguments` verbatim (not JSON, or not an object). */
  enqueueMalformedToolCall(name: string, rawArguments: string, options?: { id?: string; usage?: FakeUsage }): FakeOpenAi;
  enqueueError(status: number, options?: { message?: string; type?: string; code?: string | null; retryAfter?: string }): FakeOpenAi;
  /** Only the requests the fake answered from the script/default (not the rejected ones). */
  answered(): ReceivedCompletion[];
  /** Empties script and received, restores the defaults and the tool-call id count. */
  reset(): void;
  close(): Promise<void>;
}

/** Builders for `enqueue(...)` and function replies. */
export const openAiReply = {
  text: (text: string, usage?: FakeUsage): OpenAiReply => ({ kind: 'text', text, ...(usage ? { usage } : {}) }),
  toolUse: (name: string, input: unknown, usage?: FakeUsage): OpenAiReply => ({ kind: 'tool_use', calls: [{ name, input }], ...(usage ? { usage } : {}) }),
  malformedToolCall: (name: string, rawArguments: string, usage?: FakeUsage): OpenAiReply => ({
    kind: 'tool_use',
    calls: [{ name, arguments: rawArguments }],
    ...(usage ? { usage } : {}),
  }),
  error: (status: number, message?: string): OpenAiReply => ({ kind: 'error', status, ...(message ? { message } : {}) }),
};

const ERRORS: Record<number, { message: string; type: string; code: string | null }> = {
  400: { message: 'Invalid request.', type: 'invalid_request_error', code: null },
  404: { message: 'The model does not exist or you do not have access to it.', type: 'invalid_request_error', code: 'model_not_found' },
  429: { message: 'Rate limit reached for requests. Please try again in 1s.', type: 'requests', code: 'rate_limit_exceeded' },
  500: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', code: null },
  503: { message: 'The engine is currently overloaded, please try again later.', type: 'server_error', code: null },
};

const DEFAULT_USAGE: FakeUsage = { input_tokens: 100, output_tokens: 20 };
const COMPLETIONS_PATH = '/v1/chat/completions';

/**
 * The fake for one test file, on DynamoDB Local's tables (the usage ledger): started before its
 * tests, reset before each, closed after them; the real clock is back after each test (some fake
 * Date). Answers a getter: the server exists once the file's tests run.
 */
export function useFakeOpenAi(options: FakeOpenAiOptions = {}): () => FakeOpenAi {
  let openai: FakeOpenAi | undefined;
  beforeAll(async () => {
    await useTestTables();
    openai = await startFakeOpenAi(options);
  });
  afterAll(async () => {
    await openai?.close();
  });
  beforeEach(() => openai?.reset());
  afterEach(() => {
    vi.useRealTimers();
  });
  return () => {
    if (!openai) throw new Error('the fake OpenAI server starts in beforeAll');
    return openai;
  };
}

export async function startFakeOpenAi(options: FakeOpenAiOptions = {}): Promise<FakeOpenAi> {
  const timers = new Set<NodeJS.Timeout>();
  let toolCallIds = 0;
  let answeredCount = 0;
  let completions = 0;

  const fake: FakeOpenAi = {
    baseUrl: '',
    received: [],
    script: [],
    defaultReply: { kind: 'text', text: 'OK' },
    defaultUsage: { ...DEFAULT_USAGE },
    strict: true,
    enqueue(...replies) {
      fake.script.push(...replies);
      return fake;
    },
    enqueueText(text, options = {}) {
      return fake.enqueue({ kind: 'text', text, ...options });
    },
    enqueueToolUse(calls, options = {}) {
      return fake.enqueue({ kind: 'tool_use', calls: Array.isArray(calls) ? calls : [calls], ...options });
    },
    enqueueMalformedToolCall(name, rawArguments, options = {}) {
      return fake.enqueue({
        kind: 'tool_use',
        calls: [{ name, arguments: rawArguments, ...(options.id ? { id: options.id } : {}) }],
        ...(options.usage ? { usage: options.usage } : {}),
      });
    },
    enqueueError(status, options = {}) {
      return fake.enqueue({ kind: 'error', status, ...options });
    },
    answered: () => fake.received.filter((request) => !request.rejected),
    reset() {
      fake.received.length = 0;
      fake.script.length = 0;
      fake.defaultReply = { kind: 'text', text: 'OK' };
      fake.defaultUsage = { ...DEFAULT_USAGE };
      fake.strict = true;
      toolCallIds = 0;
      answeredCount = 0;
    },
    close: async () => undefined,
  };

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    // The client may have given up (timeout test): nothing left to answer.
    if (res.destroyed || res.writableEnded) return;
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const apiError = (res: ServerResponse, status: number, error: { message: string; type: string; code: string | null; param?: string | null }, headers = {}) =>
    send(res, status, { error: { param: null, ...error } }, headers);

  const answer = (res: ServerResponse, reply: OpenAiReply, request: ReceivedCompletion, index: number, depth = 0): void => {
    if (typeof reply === 'function') {
      if (depth > 10) throw new Error('fake-openai: function replies nested too deep');
      return answer(res, reply(request, index), request, index, depth + 1);
    }
    switch (reply.kind) {
      case 'text':
      case 'tool_use': {
        const toolCalls =
          reply.kind === 'tool_use'
            ? reply.calls.map(
                (call): WireToolCall => ({
                  id: call.id ?? `call_${++toolCallIds}`,
                  type: 'function',
                  function: { name: call.name, arguments: call.arguments ?? JSON.stringify(call.input ?? {}) },
                }),
              )
            : undefined;
        const usage = reply.usage ?? fake.defaultUsage;
        completions += 1;
        return send(res, 200, {
          id: `chatcmpl-fake${completions}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: typeof request.body.model === 'string' ? request.body.model : 'fake',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: reply.text ?? null, ...(toolCalls ? { tool_calls: toolCalls } : {}), refusal: null },
              logprobs: null,
              finish_reason: reply.finishReason ?? (toolCalls ? 'tool_calls' : 'stop'),
            },
          ],
          usage: {
            prompt_tokens: usage.input_tokens,
            completion_tokens: usage.output_tokens,
            total_tokens: usage.total_tokens ?? usage.input_tokens + usage.output_tokens,
            ...(usage.cached_tokens !== undefined ? { prompt_tokens_details: { cached_tokens: usage.cached_tokens } } : {}),
          },
        });
      }
      case 'error': {
        const known = ERRORS[reply.status] ?? {
          message: `HTTP ${reply.status}`,
          type: reply.status >= 500 ? 'server_error' : 'invalid_request_error',
          code: null,
        };
        return apiError(
          res,
          reply.status,
          { message: reply.message ?? known.message, type: reply.type ?? known.type, code: reply.code === undefined ? known.code : reply.code },
          reply.retryAfter ? { 'retry-after': reply.retryAfter } : {},
        );
      }
      case 'delay': {
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer(res, reply.then, request, index);
        }, reply.ms);
        timers.add(timer);
        return;
      }
      case 'held': {
        void reply.until.finally(() => answer(res, reply.then, request, index));
        return;
      }
      case 'raw':
        return send(res, reply.status, reply.body, reply.headers);
    }
  };

  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://fake').pathname;
      const parsed = parseJson(raw);
      const request: ReceivedCompletion = {
        method: req.method ?? '',
        path,
        headers: req.headers,
        body: (isObject(parsed) ? parsed : { model: '', messages: [] }) as ChatCompletionWireBody,
      };
      fake.received.push(request);
      const refuse = (status: number, error: { message: string; type: string; code: string | null; param?: string | null }) => {
        request.rejected = error.message;
        apiError(res, status, error);
      };

      if (path !== COMPLETIONS_PATH) return refuse(404, { message: `Invalid URL (${req.method} ${path})`, type: 'invalid_request_error', code: null });
      if (req.method !== 'POST') return refuse(405, { message: `Invalid method (${req.method})`, type: 'invalid_request_error', code: null });
      if (options.apiKey !== undefined) {
        const presented = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        if (!presented) {
          return refuse(401, {
            message:
              "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            type: 'invalid_request_error',
            code: null,
          });
        }
        if (presented !== options.apiKey) {
          return refuse(401, {
            message: `Incorrect API key provided: ${presented}. You can find your API key at https://platform.openai.com/account/api-keys.`,
            type: 'invalid_request_error',
            code: 'invalid_api_key',
          });
        }
      }
      if (!isObject(parsed)) {
        return refuse(400, { message: 'We could not parse the JSON body of your request.', type: 'invalid_request_error', code: null });
      }
      const invalid = fake.strict ? strictCheck(request.body) : undefined;
      if (invalid) return refuse(400, { message: invalid.message, type: 'invalid_request_error', code: null, param: invalid.param });

      try {
        answer(res, fake.script.shift() ?? fake.defaultReply, request, answeredCount++);
      } catch (error) {
        // A scripted function threw: a 400 (never retried) shows the test why, instead of crashing the server.
        request.rejected = `script error: ${String(error)}`;
        apiError(res, 400, { message: `fake-openai: the scripted reply threw: ${String(error)}`, type: 'invalid_request_error', code: null });
      }
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      for (const timer of timers) clearTimeout(timer);
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return fake;
}

/** The OpenAI validations an agentic loop can trip over; the first one failed. */
function strictCheck(body: ChatCompletionWireBody): { message: string; param: string } | undefined {
  if (typeof body.model !== 'string' || !body.model) return { message: 'you must provide a model parameter', param: 'model' };
  const messages = Array.isArray(body.messages) ? body.messages : [];
  if (messages.length === 0) return { message: "Invalid 'messages': empty array. Expected an array with minimum length 1.", param: 'messages' };
  for (const [i, message] of messages.entries()) {
    if (message.role === 'tool') {
      // Walk back over the tool messages of this run to the assistant message they answer.
      let j = i - 1;
      while (j >= 0 && messages[j]!.role === 'tool') j -= 1;
      const calls = messages[j]?.role === 'assistant' ? (messages[j]!.tool_calls ?? []) : [];
      if (!calls.some((call) => call.id === message.tool_call_id)) {
        return {
          message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          param: `messages.[${i}].role`,
        };
      }
    }
    if (message.role === 'assistant' && message.tool_calls?.length) {
      const answered = new Set<string | undefined>();
      for (let j = i + 1; j < messages.length && messages[j]!.role === 'tool'; j += 1) answered.add(messages[j]!.tool_call_id);
      const missing = message.tool_calls.filter((call) => !answered.has(call.id)).map((call) => call.id);
      if (missing.length > 0) {
        return {
          message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`,
          param: 'messages',
        };
      }
    }
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
