// One call of an AWS API that speaks the JSON protocol (DynamoDB, Secrets Manager), as the
// SDK's clients make it: the request signed with Signature Version 4 (signing.ts), sent over a
// keep-alive connection, retried as the SDK's standard retry mode retries (the same error
// lists, the same backoff), and an error answer thrown as an AwsError named like the SDK's
// exception (`ConditionalCheckFailedException`). Why not the SDK's clients: every route
// group reads DynamoDB and a secret, and those two clients cost each cold start about as
// much as everything else a group loads (shared/aws/README.md, issue 21).
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { setTimeout as wait } from 'node:timers/promises';
import { coreSettings } from '../config/core.js';
import { AnswerTooLarge } from '../http/outbound.js';
import { signedPost } from './signing.js';

export interface AwsJsonService {
  /** SigV4's service name, which is also the first label of the endpoint's host: `dynamodb`, `secretsmanager`. */
  readonly signingName: string;
  /** What `X-Amz-Target` starts with: `DynamoDB_20120810`, `secretsmanager`. */
  readonly targetPrefix: string;
  /** The protocol's version, in the content type (`application/x-amz-json-1.0`). */
  readonly jsonVersion: '1.0' | '1.1';
  /** The service's endpoint override (AWS_ENDPOINT_URL_<SERVICE>, then AWS_ENDPOINT_URL), if any. */
  readonly endpoint: () => URL | undefined;
}

export interface CallOptions {
  /** Ends the call (and its retries) when it aborts. */
  readonly signal?: AbortSignal;
  /** Attempts in all, the first included (the SDK's `maxAttempts`); 4 unless said. */
  readonly maxAttempts?: number;
  /** The largest answer taken (bytes); a larger one is AnswerTooLarge, not retried. MAX_ANSWER_BYTES unless said. */
  readonly maxAnswerBytes?: number;
}

/** An error answer of an AWS API: `name` is the error's type as the SDK names its exception, `fields` the rest of the body. */
export class AwsError extends Error {
  constructor(
    name: string,
    message: string,
    /** The HTTP status of the answer. */
    readonly status: number,
    /** The answer's other fields (DynamoDB's `CancellationReasons`, …). */
    readonly fields: Readonly<Record<string, unknown>>,
  ) {
    super(message);
    this.name = name;
  }
}

// What the SDK's standard retry mode retries (@smithy/service-error-classification's lists).
const THROTTLING = new Set([
  'BandwidthLimitExceeded',
  'EC2ThrottledException',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TransactionInProgressException',
]);
// DynamoDB models ReplicatedWriteConflictException as retryable (a global table's concurrent write).
const TRANSIENT = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException', 'ReplicatedWriteConflictException']);
const TRANSIENT_STATUS = new Set([500, 502, 503, 504]);
const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
// …and its backoff: a random wait up to base × 2^attempt, at most 20 s.
const BASE_DELAY_MS = 100;
const THROTTLING_BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 20_000;
const DEFAULT_ATTEMPTS = 4;

/** A connection that sends nothing for this long is dead: the attempt fails and is retried. */
const IDLE_TIMEOUT_MS = 20_000;
/** The largest answer taken unless a call says less: a BatchGetItem answers up to 16 MB of items, which base64 and JSON make larger. */
const MAX_ANSWER_BYTES = 64 << 20;

// One pool of kept-alive connections per scheme for the container's life (the SDK's handler also allows 50 sockets per host).
const agents = { https: new HttpsAgent({ keepAlive: true, maxSockets: 50 }), http: new HttpAgent({ keepAlive: true, maxSockets: 50 }) };

/**
 * The region requests to DynamoDB Local (`npm start`: DYNAMODB_LOCAL) are signed for, whatever AWS_REGION says (Bedrock's,
 * SES's): without -sharedDb it keeps one database per key id and region, and a start with another AWS_REGION found none.
 */
const LOCAL_REGION = 'local';

/** Calls `operation` of `service` with `input` (already in the API's JSON shape) and answers its JSON output. */
export async function awsJsonCall<T = Record<string, unknown>>(
  service: AwsJsonService,
  operation: string,
  input: unknown,
  options: CallOptions = {},
): Promise<T> {
  const core = coreSettings();
  const endpoint = service.endpoint();
  const local = core.dynamoLocal && endpoint !== undefined && endpoint.href === core.dynamoEndpoint?.href;
  const region = local ? LOCAL_REGION : core.region;
  if (!region) throw new Error(`AWS_REGION is not set: ${service.signingName} cannot be reached.`);
  const url = endpoint ?? new URL(`https://${service.signingName}.${region}.amazonaws.com/`);
  const body = JSON.stringify(input);
  const attempts = options.maxAttempts ?? DEFAULT_ATTEMPTS;
  for (let attempt = 1; ; attempt++) {
    let error: unknown;
    try {
      const headers = await signedPost({
        service: service.signingName,
        region,
        url,
        headers: { 'content-type': `application/x-amz-json-${service.jsonVersion}`, 'x-amz-target': `${service.targetPrefix}.${operation}` },
        body,
        // DynamoDB Local takes any signature: the user's own AWS credentials are left to Bedrock, SES and Prometheus.
        ...(local ? { credentials: { accessKeyId: core.dynamoLocalKey, secretAccessKey: 'local' } } : {}),
      });
      const answer = await post(url, headers, body, options.maxAnswerBytes ?? MAX_ANSWER_BYTES, options.signal);
      if (answer.status >= 200 && answer.status < 300) return (answer.text ? JSON.parse(answer.text) : {}) as T;
      error = errorOf(answer.status, answer.text, answer.headers);
    } catch (thrown) {
      error = thrown;
    }
    const delay = retryDelay(error, attempt);
    if (delay === undefined || attempt >= attempts || options.signal?.aborted) throw error;
    await wait(delay, undefined, { signal: options.signal }).catch(() => undefined);
    // Ended while waiting: the failure it waited to retry is the answer.
    if (options.signal?.aborted) throw error;
  }
}

/** An AWS service refused the call for its rate or capacity (what the SDK's standard retry mode calls throttling). */
export function isThrottling(error: unknown): boolean {
  return error instanceof AwsError && (THROTTLING.has(error.name) || error.status === 429);
}

/** The service failed or could not be reached (a 5xx, a timeout, a broken connection): retried, and a moment later it may answer. */
export function isTransient(error: unknown): boolean {
  if (error instanceof AwsError) return !isThrottling(error) && (TRANSIENT.has(error.name) || TRANSIENT_STATUS.has(error.status));
  return NETWORK_CODES.has((error as { code?: string } | undefined)?.code ?? '');
}

/** How long to wait before the next attempt after `error`, or undefined when it is not retried. */
function retryDelay(error: unknown, attempt: number): number | undefined {
  const base = isThrottling(error) ? THROTTLING_BASE_DELAY_MS : isTransient(error) ? BASE_DELAY_MS : undefined;
  return base === undefined ? undefined : Math.floor(Math.min(MAX_DELAY_MS, Math.random() * 2 ** attempt * base));
}

/** An error answer as the SDK reads it: its type (the name AwsError carries) and message, and the body's other fields. */
function errorOf(status: number, text: string, headers: IncomingMessage['headers']): AwsError {
  let fields: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) fields = parsed as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's page): the status says what there is to say.
  }
  const header = headers['x-amzn-errortype'];
  // In the SDK's order: the header, then the body's `code`, then `__type`; the name ends at a ':' or ',' and follows any '#'.
  const raw = String((typeof header === 'string' && header) || fields.code || fields.__type || '');
  const name = raw.split(/[:,]/)[0]!.split('#').pop() || (status >= 500 ? 'InternalServerError' : 'UnknownError');
  const message = String(fields.message ?? fields.Message ?? `${name} (HTTP ${status})`);
  const { __type: _type, message: _m, Message: _M, ...rest } = fields;
  return new AwsError(name, message, status, rest);
}

interface Answer {
  status: number;
  text: string;
  headers: IncomingMessage['headers'];
}

function post(url: URL, headers: Record<string, string>, body: string, maxBytes: number, signal?: AbortSignal): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const secure = url.protocol === 'https:';
    const request = (secure ? httpsRequest : httpRequest)(
      {
        protocol: url.protocol,
        // An IPv6 literal without its brackets; the path with its query, as signed.
        hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers,
        agent: secure ? agents.https : agents.http,
        timeout: IDLE_TIMEOUT_MS,
        signal,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) response.destroy(new AnswerTooLarge(maxBytes));
          else chunks.push(chunk);
        });
        response.on('error', reject);
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks, size).toString('utf8'), headers: response.headers }));
        // A connection closed before the whole answer arrived is a reset, which the SDK retries.
        response.on('close', () => {
          if (!response.complete) reject(Object.assign(new Error('the connection closed before the answer ended'), { code: 'ECONNRESET' }));
        });
      },
    );
    request.on('timeout', () => request.destroy(Object.assign(new Error(`no data for ${IDLE_TIMEOUT_MS / 1000} s`), { code: 'ETIMEDOUT' })));
    request.on('error', reject);
    request.end(body);
  });
}
