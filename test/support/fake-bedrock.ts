// A local server speaking Amazon Bedrock Runtime's Converse protocol (restJson1)
// so the real @aws-sdk/client-bedrock-runtime is tested over the wire.
//
// Transport: HTTP/2 without TLS (h2c). Since 3.798 the Bedrock Runtime client's
// default request handler is NodeHttp2Handler, which speaks only HTTP/2 (to an
// http:// endpoint: h2c with prior knowledge); a node:http server would see a
// "Protocol error". Point the client here with AWS_ENDPOINT_URL_BEDROCK_RUNTIME
// = fake.endpoint (plus AWS_REGION and any AWS_ACCESS_KEY_ID/SECRET pair).
//
// Wire: POST /model/{modelId}/converse with a SigV4 (or Bearer) authorization
// header and a JSON body {messages, system?, toolConfig?, inferenceConfig?};
// the answer is {output:{message:{role:'assistant', content}}, stopReason,
// usage:{inputTokens, outputTokens, totalTokens}, metrics:{latencyMs}}. Errors
// as the service sends them: status, `x-amzn-errortype: <Type>:<namespace>` and
// {message}, which the SDK turns into ThrottlingException & co.
//
// SCRIPTING. Every converse request takes the next reply from `script` (a FIFO
// queue); when it is empty, `defaultReply` answers (text "OK"). A reply is data
// or a function of the request:
//   fake.enqueueToolUse({ name: 'fleet_query', input: { sql: 'select 1' } }, { usage: { input_tokens: 900, output_tokens: 40 } })
//       .enqueueText('Two clusters are at risk.', { usage: { input_tokens: 1200, output_tokens: 80 } });
//   fake.enqueueError('ThrottlingException');                      // 429, then the next reply
//   fake.enqueue({ kind: 'delay', ms: 5_000, then: { kind: 'text', text: 'late' } });   // provoke timeouts
//   fake.enqueue({ kind: 'endless', status: 200 });                 // an answer that never ends
//   fake.enqueue((req) => ({ kind: 'text', text: `saw ${req.body.messages.length} messages` }));
//   fake.enqueue(...Array.from({ length: 13 }, (_, i) => bedrockReply.toolUse('fleet_query', { round: i })));  // > 12 rounds
// Tool-use ids are deterministic: tooluse_1, tooluse_2, … in the order the fake
// hands them out (reset() restarts the count); pass `id` to choose one.
// Token usage: per reply (`usage`), else `defaultUsage` ({input_tokens: 100,
// output_tokens: 20}); totalTokens is their sum unless `total_tokens` is given,
// so ledger costs can be asserted exactly. `cache_read_input_tokens` and
// `cache_write_input_tokens` add cacheReadInputTokens / cacheWriteInputTokens,
// apart from inputTokens and within totalTokens, as Bedrock reports them.
//
// RECORDING. `received` holds every request in arrival order, including ones the
// fake refused (those have `rejected` set and consume no script entry): path,
// decoded modelId, headers, and the parsed body (typed as the SDK sends it).
//
// STRICT (on by default). Before taking a reply the fake makes the checks the
// real service makes that an agentic loop can trip over, answering 400
// ValidationException like Bedrock: the conversation starts with a user
// message and alternates roles; no blank text blocks; toolConfig is present
// whenever the messages hold toolUse/toolResult blocks (so the last round of a
// loop must still send the tools); a user turn after tool calls carries exactly
// one toolResult per toolUse id of the previous assistant turn.
import { randomUUID } from 'node:crypto';
import { createServer, type Http2ServerRequest, type Http2ServerResponse, type Http2Session, type IncomingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';

/** What an endless reply writes at most: far beyond any bound a client sets, yet not a runaway test. */
const ENDLESS_MAX_BYTES = 256 * 1024 * 1024;

export interface FakeUsage {
  /** inputTokens: as Bedrock reports it, without the cache reads and writes below. */
  input_tokens: number;
  output_tokens: number;
  /** Default: input_tokens + output_tokens + the cache reads and writes, as Bedrock counts it. */
  total_tokens?: number;
  /** Sent as cacheReadInputTokens. */
  cache_read_input_tokens?: number;
  /** Sent as cacheWriteInputTokens. */
  cache_write_input_tokens?: number;
}

export interface FakeToolCall {
  name: string;
  input: unknown;
  /** Default: tooluse_<n>. */
  id?: string;
}

export type BedrockErrorType =
  | 'ThrottlingException'
  | 'ValidationException'
  | 'AccessDeniedException'
  | 'UnrecognizedClientException'
  | 'InternalServerException'
  | 'ServiceUnavailableException'
  | 'ModelTimeoutException'
  | 'ModelNotReadyException'
  | 'ModelErrorException'
  | 'ResourceNotFoundException'
  | 'ServiceQuotaExceededException';

export type BedrockReply =
  /** A final answer: stopReason end_turn unless given. */
  | { kind: 'text'; text: string; usage?: FakeUsage; stopReason?: string }
  /** One or more tool calls, optionally after some text: stopReason tool_use. */
  | { kind: 'tool_use'; calls: FakeToolCall[]; text?: string; usage?: FakeUsage; stopReason?: string }
  /** A service error; status defaults from the type (429 ThrottlingException, 400 ValidationException, …). */
  | { kind: 'error'; type: BedrockErrorType | (string & {}); status?: number; message?: string; retryAfter?: string }
  /** Waits, then answers `then` (unless the client gave up first). */
  | { kind: 'delay'; ms: number; then: BedrockReply }
  /** Anything else, verbatim (e.g. a body that is not JSON). */
  | { kind: 'raw'; status: number; body: string; headers?: Record<string, string> }
  /** A body that does not end: the start of a JSON answer, then 64 KB chunks until the client stops reading (at most 256 MB). */
  | { kind: 'endless'; status: number }
  | ((request: ReceivedConverse, index: number) => BedrockReply);

/** A content block as the SDK serializes it. */
export interface ConverseWireBlock {
  text?: string;
  toolUse?: { toolUseId: string; name: string; input: unknown };
  toolResult?: { toolUseId: string; content: { text?: string; json?: unknown }[]; status?: 'success' | 'error' };
  [other: string]: unknown;
}

/** The Converse request body as the SDK sends it (parsed JSON, not validated beyond the strict checks). */
export interface ConverseWireBody {
  messages: { role: 'user' | 'assistant'; content: ConverseWireBlock[] }[];
  system?: { text: string }[];
  toolConfig?: {
    tools: { toolSpec: { name: string; description?: string; inputSchema: { json: Record<string, unknown> } } }[];
    toolChoice?: unknown;
  };
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  [other: string]: unknown;
}

export interface ReceivedConverse {
  method: string;
  path: string;
  /** Decoded from the path, e.g. anthropic.claude-3-5-sonnet-20240620-v1:0 */
  modelId: string;
  headers: IncomingHttpHeaders;
  body: ConverseWireBody;
  /** Set when the fake refused the request itself (auth, path, strict check): the reason. */
  rejected?: string;
  /** An endless reply: the bytes written when the client closed the stream (undefined while it is open). */
  streamedBytes?: number;
}

export interface FakeBedrock {
  /** http://127.0.0.1:PORT, for AWS_ENDPOINT_URL_BEDROCK_RUNTIME. */
  endpoint: string;
  received: ReceivedConverse[];
  /** Replies still to give, first first. Mutable. */
  script: BedrockReply[];
  /** Answers when the script is empty. */
  defaultReply: BedrockReply;
  defaultUsage: FakeUsage;
  strict: boolean;
  enqueue(...replies: BedrockReply[]): FakeBedrock;
  enqueueText(text: string, options?: { usage?: FakeUsage; stopReason?: string }): FakeBedrock;
  enqueueToolUse(calls: FakeToolCall | FakeToolCall[], options?: { text?: string; usage?: FakeUsage }): FakeBedrock;
  enqueueError(type: BedrockErrorType, options?: { status?: number; message?: string; retryAfter?: string }): FakeBedrock;
  /** Only the converse requests the fake answered from the script/default (not the rejected ones). */
  answered(): ReceivedConverse[];
  /** Empties script and received, restores the defaults and the tool-use id count. */
  reset(): void;
  close(): Promise<void>;
}

/** Builders for `enqueue(...)` and function replies. */
export const bedrockReply = {
  text: (text: string, usage?: FakeUsage): BedrockReply => ({ kind: 'text', text, ...(usage ? { usage } : {}) }),
  toolUse: (name: string, input: unknown, usage?: FakeUsage): BedrockReply => ({ kind: 'tool_use', calls: [{ name, input }], ...(usage ? { usage } : {}) }),
  error: (type: BedrockErrorType, message?: string): BedrockReply => ({ kind: 'error', type, ...(message ? { message } : {}) }),
};

const ERRORS: Record<BedrockErrorType, { status: number; message: string }> = {
  ThrottlingException: { status: 429, message: 'Too many requests, please wait before trying again.' },
  ValidationException: { status: 400, message: 'Malformed input request, please reformat your input and try again.' },
  // Names the account and role like the real one, so tests can check it is not passed on.
  AccessDeniedException: {
    status: 403,
    message: 'User: arn:aws:sts::123456789012:assumed-role/fleet-health-chat/fn is not authorized to perform: bedrock:InvokeModel',
  },
  UnrecognizedClientException: { status: 403, message: 'The security token included in the request is invalid.' },
  InternalServerException: { status: 500, message: 'The system encountered an unexpected error during processing. Try your request again.' },
  ServiceUnavailableException: { status: 503, message: 'Bedrock is unable to process your request.' },
  ModelTimeoutException: { status: 408, message: 'Model has timed out in processing the request. Try your request again.' },
  ModelNotReadyException: { status: 429, message: 'Model is not ready to serve inference requests.' },
  ModelErrorException: { status: 424, message: 'The model returned an error while processing the request.' },
  ResourceNotFoundException: { status: 404, message: 'Could not resolve the foundation model from the provided model identifier.' },
  ServiceQuotaExceededException: { status: 400, message: 'Your request exceeded the service quota for your account.' },
};

const DEFAULT_USAGE: FakeUsage = { input_tokens: 100, output_tokens: 20 };
const CONVERSE_PATH = /^\/model\/([^/]+)\/converse$/;

export async function startFakeBedrock(): Promise<FakeBedrock> {
  const sessions = new Set<Http2Session>();
  const timers = new Set<NodeJS.Timeout>();
  let toolUseIds = 0;
  let answeredCount = 0;

  const fake: FakeBedrock = {
    endpoint: '',
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
    enqueueError(type, options = {}) {
      return fake.enqueue({ kind: 'error', type, ...options });
    },
    answered: () => fake.received.filter((request) => !request.rejected),
    reset() {
      fake.received.length = 0;
      fake.script.length = 0;
      fake.defaultReply = { kind: 'text', text: 'OK' };
      fake.defaultUsage = { ...DEFAULT_USAGE };
      fake.strict = true;
      toolUseIds = 0;
      answeredCount = 0;
    },
    close: async () => undefined,
  };

  const send = (res: Http2ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    // The client may have given up (timeout test): nothing left to answer.
    if (res.stream.destroyed || res.stream.closed) return;
    res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-requestid': randomUUID(), ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const serviceError = (res: Http2ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}) =>
    send(res, status, { message }, { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, ...headers });

  const answer = (res: Http2ServerResponse, reply: BedrockReply, request: ReceivedConverse, index: number, depth = 0): void => {
    if (typeof reply === 'function') {
      if (depth > 10) throw new Error('fake-bedrock: function replies nested too deep');
      return answer(res, reply(request, index), request, index, depth + 1);
    }
    switch (reply.kind) {
      case 'text':
      case 'tool_use': {
        const content: ConverseWireBlock[] = [];
        if (reply.text !== undefined) content.push({ text: reply.text });
        if (reply.kind === 'tool_use') {
          for (const call of reply.calls) content.push({ toolUse: { toolUseId: call.id ?? `tooluse_${++toolUseIds}`, name: call.name, input: call.input } });
        }
        const usage = reply.usage ?? fake.defaultUsage;
        return send(res, 200, {
          output: { message: { role: 'assistant', content } },
          stopReason: reply.stopReason ?? (reply.kind === 'tool_use' ? 'tool_use' : 'end_turn'),
          usage: {
            inputTokens: usage.input_tokens,
            outputTokens: usage.output_tokens,
            totalTokens:
              usage.total_tokens ?? usage.input_tokens + usage.output_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_write_input_tokens ?? 0),
            ...(usage.cache_read_input_tokens !== undefined ? { cacheReadInputTokens: usage.cache_read_input_tokens } : {}),
            ...(usage.cache_write_input_tokens !== undefined ? { cacheWriteInputTokens: usage.cache_write_input_tokens } : {}),
          },
          metrics: { latencyMs: 42 },
        });
      }
      case 'error': {
        const known = ERRORS[reply.type as BedrockErrorType];
        return serviceError(
          res,
          reply.status ?? known?.status ?? 400,
          reply.type,
          reply.message ?? known?.message ?? reply.type,
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
      case 'raw':
        return send(res, reply.status, reply.body, reply.headers);
      case 'endless': {
        const chunk = Buffer.alloc(64 * 1024, 'a');
        let written = 0;
        res.stream.once('close', () => {
          request.streamedBytes = written;
        });
        res.writeHead(reply.status, { 'content-type': 'application/json', 'x-amzn-requestid': randomUUID() });
        res.write('{"output":{"message":{"role":"assistant","content":[{"text":"');
        // Written as fast as HTTP/2's flow control lets the client take it.
        const pump = () => {
          while (!res.stream.destroyed && !res.stream.closed && written < ENDLESS_MAX_BYTES) {
            written += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          if (!res.stream.destroyed && !res.stream.closed) res.end('"}]}}}');
        };
        return pump();
      }
    }
  };

  const server = createServer((req: Http2ServerRequest, res: Http2ServerResponse) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const path = new URL(req.url, 'http://fake').pathname;
      const match = CONVERSE_PATH.exec(path);
      const parsed = parseJson(raw);
      const request: ReceivedConverse = {
        method: req.method,
        path,
        modelId: match ? decodeURIComponent(match[1]!) : '',
        headers: req.headers,
        body: (isObject(parsed) ? parsed : { messages: [] }) as ConverseWireBody,
      };
      fake.received.push(request);
      const refuse = (status: number, type: string, message: string) => {
        request.rejected = `${type}: ${message}`;
        serviceError(res, status, type, message);
      };

      if (req.method !== 'POST' || !match) return refuse(404, 'UnknownOperationException', 'Unknown operation');
      const authorization = req.headers.authorization ?? '';
      if (!authorization.startsWith('AWS4-HMAC-SHA256 ') && !authorization.startsWith('Bearer ')) {
        return refuse(403, 'MissingAuthenticationTokenException', 'Missing Authentication Token');
      }
      if (!isObject(parsed)) return refuse(400, 'SerializationException', 'The request body is not JSON.');
      const invalid = fake.strict ? strictCheck(request.body) : undefined;
      if (invalid) return refuse(400, 'ValidationException', invalid);

      try {
        answer(res, fake.script.shift() ?? fake.defaultReply, request, answeredCount++);
      } catch (error) {
        // A scripted function threw: a 400 (never retried) shows the test why, instead of crashing the server.
        request.rejected = `script error: ${String(error)}`;
        serviceError(res, 400, 'ValidationException', `fake-bedrock: the scripted reply threw: ${String(error)}`);
      }
    });
  });
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  fake.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      for (const timer of timers) clearTimeout(timer);
      server.close(() => resolve());
      for (const session of sessions) session.destroy();
    });
  return fake;
}

/** The Bedrock validations an agentic loop can trip over; the message of the first one failed. */
function strictCheck(body: ConverseWireBody): string | undefined {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  if (messages.length === 0) return 'The messages field is required and must not be empty.';
  let toolBlocks = false;
  for (const [i, message] of messages.entries()) {
    if (i === 0 && message.role !== 'user')
      return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
    if (i > 0 && message.role === messages[i - 1]!.role) {
      return 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.';
    }
    const content = Array.isArray(message.content) ? message.content : [];
    if (content.length === 0)
      return `The content field in the Message object at messages.${i} is empty. Add a ContentBlock object to the content field and try again.`;
    for (const [j, block] of content.entries()) {
      if (typeof block.text === 'string' && block.text.trim() === '') {
        return `The text field in the ContentBlock object at messages.${i}.content.${j} is blank. Add text to the text field, and try again.`;
      }
      if (block.toolUse || block.toolResult) toolBlocks = true;
    }
    // A user turn answering tool calls: one result per call of the previous assistant turn.
    const previous = i > 0 ? messages[i - 1]! : undefined;
    const asked = (previous?.content ?? []).flatMap((block) => (block.toolUse ? [block.toolUse.toolUseId] : []));
    const answered = content.flatMap((block) => (block.toolResult ? [block.toolResult.toolUseId] : []));
    if (message.role === 'user' && (asked.length > 0 || answered.length > 0)) {
      if (answered.length > asked.length)
        return `The number of toolResult blocks at messages.${i}.content exceeds the number of toolUse blocks of previous turn.`;
      const missing = asked.filter((id) => !answered.includes(id));
      if (missing.length > 0) return `Expected toolResult blocks at messages.${i}.content for the following Ids: ${missing.join(', ')}`;
    }
  }
  if (toolBlocks && !body.toolConfig) return 'The toolConfig field must be defined when using toolUse and toolResult content blocks.';
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
