// A client of the Prometheus HTTP query API (/api/v1/query, /api/v1/query_range),
// as Prometheus, Thanos, Mimir, VictoriaMetrics and Amazon Managed Service for
// Prometheus serve it. Requests are POSTed form-encoded (no URL length limit;
// SigV4 signs the body's hash). Every request has a timeout and a bounded body;
// failures that may pass (network, timeout, 429, 5xx) are retried with
// exponential backoff and jitter; a refused query (400, 422) is not.
import type { MetricSources } from '../rules/schemas.js';
import { signedHeaders } from './sigv4.js';
import { AnswerTooLarge, boundedText, failureReason } from '../http/outbound.js';
import { isSecureUrl } from '../http/service-url.js';

export type PrometheusSource = MetricSources['prometheus'];

/** One series of a range query: its labels and its points (seconds, value; NaN and ±Inf as Prometheus sends them). */
export interface RangeSeries {
  labels: Record<string, string>;
  points: [number, number][];
}

export interface InstantSample {
  labels: Record<string, string>;
  value: number;
}

/** A failed request, with what the server or the network said (never a credential). */
export class PrometheusError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'PrometheusError';
  }
}

/** The largest answer read: a bigger one is refused (lower max_points_per_request) rather than exhaust memory. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
const ATTEMPTS = 3;
const BACKOFF_MS = 500;
/** What an error message quotes of a server's answer. */
const QUOTE = 300;

export interface ClientOptions {
  /** The bearer token or basic password (the PROMETHEUS_CREDENTIAL secret). */
  credential?: () => Promise<string | undefined>;
  /** Waits between attempts (tests pass a recorder). */
  sleep?: (ms: number) => Promise<void>;
  /** Ends every request in flight and refuses new ones once aborted (the caller's time is up): not retried. */
  signal?: AbortSignal;
}

export interface PrometheusClient {
  queryRange(query: string, start: number, end: number, step: number): Promise<RangeSeries[]>;
  query(query: string, time: number): Promise<InstantSample[]>;
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function prometheusClient(source: PrometheusSource, options: ClientOptions = {}): PrometheusClient {
  const base = source.url.replace(/\/+$/, '');
  const sleep = options.sleep ?? sleepFor;

  /** The request's auth headers, and the secrets they carry (bearer, basic) so no message quotes them. */
  async function authOf(url: URL, body: string): Promise<{ headers: Record<string, string>; secrets?: string[] }> {
    const { auth } = source;
    if (auth.type === 'none') return { headers: {} };
    if (auth.type === 'sigv4') {
      // A version stored before sigv4 needed https (MetricSourcesToWrite): not signed, and the pull says why.
      if (!isSecureUrl(source.url))
        throw new PrometheusError("sigv4 needs an https URL (plain http only to localhost): a signed request carries the role's session token", null, false);
      return { headers: await signedHeaders(url, body, auth.region, auth.service) };
    }
    const secret = await options.credential?.();
    if (!secret) throw new PrometheusError(`auth ${auth.type} needs the PROMETHEUS_CREDENTIAL secret, which is not set`, null, false);
    // fetch's own error would quote the whole header value, secret and all.
    if (/[\r\n\0]/.test(secret)) throw new PrometheusError('the PROMETHEUS_CREDENTIAL secret holds a line break, which no HTTP header can carry', null, false);
    if (auth.type === 'bearer') return { headers: { authorization: `Bearer ${secret}` }, secrets: [secret] };
    const basic = Buffer.from(`${auth.username}:${secret}`).toString('base64');
    // An echoed header carries the password as base64: both forms are cut out of what is quoted.
    return { headers: { authorization: `Basic ${basic}` }, secrets: [secret, basic] };
  }

  const stopped = () => new PrometheusError("stopped: the pull's time is up", null, false);

  async function once(path: string, form: Record<string, string>): Promise<unknown> {
    if (options.signal?.aborted) throw stopped();
    const url = new URL(`${base}${path}`);
    const body = new URLSearchParams(form).toString();
    const auth = await authOf(url, body);
    const headers = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...auth.headers };
    let response: Response;
    try {
      const timeout = AbortSignal.timeout(source.timeout_seconds * 1000);
      const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
      response = await fetch(url, { method: 'POST', headers, body, signal, redirect: 'error' });
    } catch (error) {
      if (options.signal?.aborted) throw stopped();
      // Only the kind of failure: fetch's messages may quote what was sent. A redirect is refused (a credential must not follow it).
      if ((error as { cause?: { message?: unknown } } | undefined)?.cause?.message === 'unexpected redirect')
        throw new PrometheusError(`${url.host} answered with a redirect, which is not followed: set url to where it leads`, null, false);
      throw new PrometheusError(`${url.host} unreachable: ${failureReason(error, source.timeout_seconds * 1000)}`, null, true);
    }
    const text = await boundedBody(response, source.timeout_seconds).catch((error: unknown) => {
      throw options.signal?.aborted ? stopped() : error;
    });
    if (!response.ok) {
      const retryable = response.status === 429 || response.status >= 500;
      // A proxy's refusal may echo the credential it refused: not quoted at all.
      if (auth.secrets && (response.status === 401 || response.status === 403))
        throw new PrometheusError(
          `${response.status} from ${url.host}${path}: the ${source.auth.type} credential was refused (check PROMETHEUS_CREDENTIAL)`,
          response.status,
          false,
        );
      const detail = redacted(prometheusErrorOf(text) ?? text.slice(0, QUOTE).replace(/\s+/g, ' '), auth.secrets);
      throw new PrometheusError(`${response.status} from ${url.host}${path}: ${detail}`, response.status, retryable);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new PrometheusError(`the answer of ${url.host}${path} is not JSON`, response.status, false);
    }
    const envelope = parsed as { status?: unknown; data?: unknown };
    if (envelope?.status !== 'success')
      throw new PrometheusError(`${url.host}${path}: ${redacted(prometheusErrorOf(text) ?? 'status is not success', auth.secrets)}`, response.status, false);
    return envelope.data;
  }

  async function request(path: string, form: Record<string, string>): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await once(path, form);
      } catch (error) {
        if (!(error instanceof PrometheusError) || !error.retryable || attempt >= ATTEMPTS) throw error;
        await sleep(BACKOFF_MS * 2 ** (attempt - 1) * (0.5 + Math.random()));
      }
    }
  }

  return {
    async queryRange(query, start, end, step) {
      const data = await request('/api/v1/query_range', { query, start: String(start), end: String(end), step: String(step) });
      return matrixOf(data);
    },
    async query(query, time) {
      const data = await request('/api/v1/query', { query, time: String(time) });
      return vectorOf(data);
    },
  };
}

/** Quoted text without the secrets, should a server echo one. */
const redacted = (text: string, secrets: readonly string[] = []) =>
  secrets.reduce((safe, secret) => (secret.length >= 4 ? safe.split(secret).join('[redacted]') : safe), text);

/** The body as text, refused past MAX_BODY_BYTES (the timeout covers the whole body too). */
async function boundedBody(response: Response, timeoutSeconds: number): Promise<string> {
  try {
    return await boundedText(response, MAX_BODY_BYTES);
  } catch (error) {
    if (error instanceof AnswerTooLarge) throw tooLarge();
    throw new PrometheusError(`the answer was cut off (or took more than ${timeoutSeconds} s)`, response.status, true);
  }
}

const tooLarge = () =>
  new PrometheusError(`the answer exceeds ${MAX_BODY_BYTES / 1024 / 1024} MB: lower max_points_per_request in metric-sources`, null, false);

/** Prometheus' own error text (`errorType: error`) from an error body, when it is one. */
function prometheusErrorOf(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { errorType?: unknown; error?: unknown };
    if (typeof body?.error === 'string') return `${typeof body.errorType === 'string' ? `${body.errorType}: ` : ''}${body.error}`.slice(0, QUOTE);
  } catch {
    // not JSON: the caller quotes the text
  }
  return undefined;
}

const malformed = (what: string) => new PrometheusError(`malformed answer: ${what}`, 200, false);

function labelsOf(metric: unknown): Record<string, string> {
  if (metric === null || typeof metric !== 'object' || Array.isArray(metric)) throw malformed('a series without a metric object');
  for (const value of Object.values(metric)) if (typeof value !== 'string') throw malformed('a label value that is not a string');
  return metric as Record<string, string>;
}

/** [seconds, "value"] → [seconds, number]; Prometheus writes NaN, +Inf and -Inf as strings, which Number() reads. */
function pointOf(pair: unknown): [number, number] {
  if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'number' || typeof pair[1] !== 'string')
    throw malformed('a point that is not [time, "value"]');
  const value = pair[1] === 'NaN' ? Number.NaN : Number(pair[1]);
  return [pair[0], value];
}

function matrixOf(data: unknown): RangeSeries[] {
  const d = data as { resultType?: unknown; result?: unknown };
  if (d?.resultType !== 'matrix' || !Array.isArray(d.result)) throw malformed('a range query must answer a matrix');
  return d.result.map((series: { metric?: unknown; values?: unknown }) => {
    if (!Array.isArray(series?.values)) throw malformed('a series without values');
    return { labels: labelsOf(series.metric), points: series.values.map(pointOf) };
  });
}

function vectorOf(data: unknown): InstantSample[] {
  const d = data as { resultType?: unknown; result?: unknown };
  if (d?.resultType !== 'vector' || !Array.isArray(d.result)) throw malformed('an instant query must answer a vector');
  return d.result.map((sample: { metric?: unknown; value?: unknown }) => ({ labels: labelsOf(sample.metric), value: pointOf(sample.value)[1] }));
}
