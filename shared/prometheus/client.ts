// A client of the Prometheus HTTP query API (/api/v1/query, /api/v1/query_range),
// as Prometheus, Thanos, Mimir, VictoriaMetrics and Amazon Managed Service for
// Prometheus serve it. Requests are POSTed form-encoded (no URL length limit;
// SigV4 signs the body's hash). Every request has a timeout and a bounded body;
// failures that may pass (network, timeout, 429, 5xx) are retried with
// exponential backoff and jitter; a refused query (400, 422) is not.
import { setTimeout as sleep } from 'node:timers/promises';
import { sourceRefusal, type MetricSources } from '../rules/schemas.js';
import { signedHeaders } from './sigv4.js';
import { AnswerTooLarge, boundedText, failureReason } from '../http/outbound.js';
import { redactCredentials } from '../http/redact.js';
import { isSecureUrl } from '../http/service-url.js';
import { parseJsonText, sliceChars } from '../text.js';

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

/** The largest answer read unless the caller says less (the puller shares it among its queries at once): a bigger one is refused rather than exhaust memory. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
const ATTEMPTS = 3;
const BACKOFF_MS = 500;
/** What an error message quotes of a server's answer. */
const QUOTE = 300;
/** What one answer's warnings and infos are read of, at most. */
const NOTES_PER_ANSWER = 10;
/**
 * The warnings that say nothing is missing from an answer: the query engine's own notes (annotations: "PromQL
 * warning: …", "PromQL info: …", "N more warning annotations omitted" after the first ones, and the same texts bare
 * in the releases before the prefix) and Thanos' "No StoreAPIs matched for this query" (no store holds the range).
 * Any other is taken as a storage's failure, the answer as partial: Prometheus reads a `remote_read` storage as a
 * secondary one and turns its failure into a warning beside a success, "remote_read: …" when the request failed, the
 * bare error ("context deadline exceeded", "unexpected EOF") when a streamed answer broke off.
 */
const HARMLESS_WARNING =
  /^(PromQL (warning|info):|\d+ more (warning |info )?annotations omitted|No StoreAPIs matched for this query|need at least 2 points|range contains a mix of|quantile value should be|no bucket label|metric might not be a counter)/;

export interface ClientOptions {
  /** The bearer token or basic password (the PROMETHEUS_CREDENTIAL secret). */
  credential?: () => Promise<string | undefined>;
  /** Waits between attempts (tests pass a recorder). */
  sleep?: (ms: number) => Promise<void>;
  /** Ends every request in flight and refuses new ones once aborted (the caller's time is up): not retried. */
  signal?: AbortSignal;
  /** The largest answer read, bytes (MAX_BODY_BYTES unless said). */
  maxAnswerBytes?: number;
}

/**
 * `notes`, when given, receives what Prometheus said beside a successful answer: its `warnings` and
 * `infos` (PromQL's annotations, e.g. "PromQL info: metric might not be a counter"), each quoted.
 */
export interface PrometheusClient {
  queryRange(query: string, start: number, end: number, step: number, notes?: string[]): Promise<RangeSeries[]>;
  query(query: string, time: number, notes?: string[]): Promise<InstantSample[]>;
}

export function prometheusClient(source: PrometheusSource, options: ClientOptions = {}): PrometheusClient {
  const base = source.url.replace(/\/+$/, '');
  const wait = options.sleep ?? sleep;

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
  /**
   * Sent with every query: the server gives up when the client does (Prometheus ran a query the client had
   * abandoned until its own -query.timeout, while the retry started it again), and Thanos answers an error
   * rather than leave out the stores that did not answer (partial_response; the others ignore it).
   */
  const SERVER_SIDE = { timeout: `${source.timeout_seconds}s`, partial_response: 'false' };
  // A version stored before these were refused when written: nothing is sent to it, and the pull says why.
  const refusal = sourceRefusal(source);

  async function once(path: string, form: Record<string, string>, notes?: string[]): Promise<unknown> {
    if (options.signal?.aborted) throw stopped();
    if (refusal) throw new PrometheusError(`${refusal.field}: ${refusal.message} (write a new metric-sources version)`, null, false);
    const url = new URL(`${base}${path}`);
    // What failures name: the host and the whole path asked, a base path such as Mimir's /prometheus included.
    const asked = `${url.host}${url.pathname}`;
    const body = new URLSearchParams({ ...form, ...SERVER_SIDE }).toString();
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
    const text = await boundedBody(response, source.timeout_seconds, options.maxAnswerBytes ?? MAX_BODY_BYTES).catch((error: unknown) => {
      throw options.signal?.aborted ? stopped() : error;
    });
    if (!response.ok) {
      const retryable = response.status === 429 || response.status >= 500;
      // A proxy's refusal may echo the credential it refused: not quoted at all.
      if (auth.secrets && (response.status === 401 || response.status === 403))
        throw new PrometheusError(
          `${response.status} from ${asked}: the ${source.auth.type} credential was refused (check PROMETHEUS_CREDENTIAL)`,
          response.status,
          false,
        );
      const detail = quoted(prometheusErrorOf(text) ?? text, auth.secrets);
      throw new PrometheusError(`${response.status} from ${asked}: ${detail}`, response.status, retryable);
    }
    let parsed: unknown;
    try {
      // Labels become cluster ids and pull notes: a lone surrogate escaped in one arrives as U+FFFD.
      parsed = parseJsonText(text);
    } catch {
      throw new PrometheusError(`the answer of ${asked} is not JSON`, response.status, false);
    }
    const envelope = parsed as { status?: unknown; data?: unknown; isPartial?: unknown; warnings?: unknown; infos?: unknown };
    if (envelope?.status !== 'success')
      throw new PrometheusError(`${asked}: ${quoted(prometheusErrorOf(text) ?? 'status is not success', auth.secrets)}`, response.status, false);
    // VictoriaMetrics' answer when a storage node did not answer: stored, its window would be marked pulled with
    // that node's series missing for good. Retried, and failed like any passing failure (the watermark stays).
    if (envelope.isPartial === true)
      throw new PrometheusError(`${asked}: a partial answer (a storage node did not answer); not stored, asked again`, response.status, true);
    // Prometheus' own way of saying the same: a remote-read (secondary) storage that failed is dropped from the
    // answer, its error a warning beside a success.
    const lost = Array.isArray(envelope.warnings) ? envelope.warnings.find((w) => typeof w !== 'string' || !HARMLESS_WARNING.test(w)) : undefined;
    if (lost !== undefined)
      throw new PrometheusError(
        `${asked}: a partial answer (a storage Prometheus reads did not answer: ${quoted(String(lost), auth.secrets)}); not stored, asked again`,
        response.status,
        true,
      );
    if (notes)
      for (const list of [envelope.warnings, envelope.infos])
        if (Array.isArray(list)) for (const note of list.slice(0, NOTES_PER_ANSWER)) if (typeof note === 'string') notes.push(quoted(note, auth.secrets));
    return envelope.data;
  }

  async function request(path: string, form: Record<string, string>, notes?: string[]): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await once(path, form, notes);
      } catch (error) {
        if (!(error instanceof PrometheusError) || !error.retryable || attempt >= ATTEMPTS) throw error;
        await wait(BACKOFF_MS * 2 ** (attempt - 1) * (0.5 + Math.random()));
      }
    }
  }

  return {
    async queryRange(query, start, end, step, notes) {
      const data = await request('/api/v1/query_range', { query, start: String(start), end: String(end), step: String(step) }, notes);
      return matrixOf(data);
    },
    async query(query, time, notes) {
      const data = await request('/api/v1/query', { query, time: String(time) }, notes);
      return vectorOf(data);
    },
  };
}

/**
 * What a message quotes of a server's text: every secret cut out of the whole text first (redactCredentials: in each
 * form an echo may carry it, as sent, JSON- or URL-escaped, or in part; basic's base64 is one of the secrets), then
 * whitespace collapsed and QUOTE characters kept. Cut or collapsed first, a secret straddling the cut
 * or holding a run of blanks would no longer match, and its start would be quoted.
 */
function quoted(text: string, secrets: readonly string[] = []): string {
  return sliceChars(redactCredentials(text, secrets).replace(/\s+/g, ' '), QUOTE);
}

/** The body as text, refused past `maxBytes` (the timeout covers the whole body too). */
async function boundedBody(response: Response, timeoutSeconds: number, maxBytes: number): Promise<string> {
  try {
    return await boundedText(response, maxBytes);
  } catch (error) {
    if (error instanceof AnswerTooLarge) throw tooLarge(error);
    throw new PrometheusError(`the answer was cut off (or took more than ${timeoutSeconds} s)`, response.status, true);
  }
}

const tooLarge = (error: AnswerTooLarge) =>
  new PrometheusError(
    `the answer is ${error.message}, the most one answer may take: lower max_points_per_request in metric-sources, or aggregate the query by the cluster label if it yields more series than clusters`,
    null,
    false,
  );

/** Prometheus' own error text (`errorType: error`) from an error body, when it is one (whole: quoted() cuts it). */
function prometheusErrorOf(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { errorType?: unknown; error?: unknown };
    if (typeof body?.error === 'string') return `${typeof body.errorType === 'string' ? `${body.errorType}: ` : ''}${body.error}`;
  } catch {
    // not JSON: the caller quotes the text
  }
  return undefined;
}

const malformed = (what: string) => new PrometheusError(`malformed answer: ${what}`, 200, false);

/** A query answering native histograms (range: `histograms`, instant: `histogram`): not numbers, and no retry changes that. */
const nativeHistograms = () =>
  new PrometheusError(
    'the query answers native histograms, which are not numbers: wrap it to return floats (histogram_quantile, histogram_sum, histogram_count)',
    200,
    false,
  );

function labelsOf(metric: unknown): Record<string, string> {
  if (metric === null || typeof metric !== 'object' || Array.isArray(metric)) throw malformed('a series without a metric object');
  for (const value of Object.values(metric)) if (typeof value !== 'string') throw malformed('a label value that is not a string');
  return metric as Record<string, string>;
}

/**
 * A number as Prometheus writes one: a decimal, with an exponent or without. Each digit can match one way
 * only: with `\d+\.?\d*` a run of digits that failed at its end was split every way first, and a value of
 * 30,000 digits and an `x` held the puller 7.6 s (the answer's byte and time bounds end before this runs).
 */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
/** Its other spellings (the puller refuses them as ingest refuses any non-finite value). */
const SPECIAL: Readonly<Record<string, number>> = {
  NaN: Number.NaN,
  Inf: Number.POSITIVE_INFINITY,
  '+Inf': Number.POSITIVE_INFINITY,
  '-Inf': Number.NEGATIVE_INFINITY,
};

/**
 * [seconds, "value"] → [seconds, number]. Only Prometheus' spellings: Number() alone would read "" and
 * " " as 0, "0x10" as 16 and "0b1" as 1, turning a broken answer into data.
 */
function pointOf(pair: unknown): [number, number] {
  if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'number' || typeof pair[1] !== 'string')
    throw malformed('a point that is not [time, "value"]');
  const text = pair[1];
  const value = Object.hasOwn(SPECIAL, text) ? SPECIAL[text]! : DECIMAL.test(text) ? Number(text) : undefined;
  if (value === undefined) throw malformed('a point value that is not a number as Prometheus writes one (a decimal, NaN, +Inf or -Inf)');
  return [pair[0], value];
}

function matrixOf(data: unknown): RangeSeries[] {
  const d = data as { resultType?: unknown; result?: unknown };
  if (d?.resultType !== 'matrix' || !Array.isArray(d.result)) throw malformed('a range query must answer a matrix');
  return d.result.map((series: { metric?: unknown; values?: unknown; histograms?: unknown }) => {
    // Native histograms come as `histograms`, not `values` (with both, the histogram points would be dropped unsaid).
    if (series?.histograms !== undefined) throw nativeHistograms();
    if (!Array.isArray(series?.values)) throw malformed('a series without values');
    return { labels: labelsOf(series.metric), points: series.values.map(pointOf) };
  });
}

function vectorOf(data: unknown): InstantSample[] {
  const d = data as { resultType?: unknown; result?: unknown };
  if (d?.resultType !== 'vector' || !Array.isArray(d.result)) throw malformed('an instant query must answer a vector');
  return d.result.map((sample: { metric?: unknown; value?: unknown; histogram?: unknown }) => {
    // An instant sample of a native histogram comes as `histogram`, not `value`.
    if (sample?.histogram !== undefined) throw nativeHistograms();
    return { labels: labelsOf(sample.metric), value: pointOf(sample.value)[1] };
  });
}
