// The Prometheus client's failures as the pull status and the logs show them, against a
// local HTTP server: what a server or fetch says is passed on, the credential never.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrometheusError, prometheusClient, type PrometheusSource } from '../../shared/prometheus/client.js';
import { openMetrics, startPrometheus } from '../support/prometheus.js';

const SECRET = 'pr0m-S3CRET-token-0123456789';
let server: Server;
let url: string;
/** The form of the last request the server received. */
let lastForm = new URLSearchParams();
let requests = 0;
/** What the server answers next: status and body (the request's Authorization header is at hand to echo). */
let answer: (authorization: string) => { status: number; body: string } = () => ({
  status: 200,
  body: '{"status":"success","data":{"resultType":"vector","result":[]}}',
});

beforeAll(async () => {
  server = createServer((req, res) => {
    let received = '';
    req.on('data', (chunk: Buffer) => (received += chunk.toString()));
    req.on('end', () => {
      lastForm = new URLSearchParams(received);
      requests++;
      const { status, body } = answer(req.headers.authorization ?? '');
      res
        .writeHead(status, { 'content-type': 'application/json', ...(status >= 300 && status < 400 ? { location: 'https://elsewhere.example/' } : {}) })
        .end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const source = (auth: PrometheusSource['auth'], at = url): PrometheusSource => ({
  enabled: true,
  url: at,
  auth,
  timeout_seconds: 2,
  step_seconds: 60,
  settle_seconds: 0,
  backfill_days: 1,
  max_points_per_request: 10_000,
});

async function failure(auth: PrometheusSource['auth'], secret = SECRET, at = url): Promise<PrometheusError> {
  const client = prometheusClient(source(auth, at), { credential: async () => secret, sleep: async () => undefined });
  const error = await client.query('up', 1_700_000_000).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PrometheusError);
  return error as PrometheusError;
}

describe('a failed Prometheus request says what went wrong without the credential', () => {
  it('a refused bearer or basic credential: the status and what to check, not the body that echoes it', async () => {
    answer = (authorization) => ({ status: 401, body: `{"error":"token ${authorization} is not valid"}` });
    for (const auth of [{ type: 'bearer' }, { type: 'basic', username: 'puller' }] as const) {
      const error = await failure(auth);
      expect(error.message).toBe(`401 from 127.0.0.1:${new URL(url).port}/api/v1/query: the ${auth.type} credential was refused (check PROMETHEUS_CREDENTIAL)`);
    }
  });

  it('any other error answer is quoted with the secret taken out', async () => {
    answer = (authorization) => ({
      status: 500,
      body: `{"status":"error","errorType":"internal","error":"upstream said ${authorization.slice('Bearer '.length)} twice: ${SECRET}"}`,
    });
    const error = await failure({ type: 'bearer' });
    expect(error.message).toContain('upstream said [redacted] twice: [redacted]');
    expect(error.message).not.toContain(SECRET);
  });

  it("names the path asked, the base path of a url such as Mimir's /prometheus included", async () => {
    answer = () => ({ status: 404, body: '404 page not found' });
    const error = await failure({ type: 'none' }, SECRET, `${url}/prometheus`);
    expect(error.message).toBe(`404 from ${new URL(url).host}/prometheus/api/v1/query: 404 page not found`);
  });

  it('a basic password echoed as the header carried it (base64) is taken out too', async () => {
    answer = (authorization) => ({ status: 502, body: `proxy error for ${authorization}` });
    const error = await failure({ type: 'basic', username: 'puller' });
    expect(error.message).toContain('proxy error for Basic [redacted]');
    expect(error.message).not.toContain(Buffer.from(`puller:${SECRET}`).toString('base64'));
  });

  it('a secret across the 300 characters quoted, or in a JSON error, is cut out of the whole answer first: no piece of it is quoted', async () => {
    // The secret starts about 288 characters into what is quoted: cut first, the quote ended "… Bearer pr0m-S3CRET-",
    // which no longer matched the secret.
    const bodies: ((authorization: string) => string)[] = [
      (authorization) => `${'x'.repeat(280)} ${authorization} refused`,
      (authorization) => JSON.stringify({ status: 'error', errorType: 'internal', error: `${'x'.repeat(270)} ${authorization} refused` }),
    ];
    for (const auth of [{ type: 'bearer' }, { type: 'basic', username: 'puller' }] as const) {
      const sent = auth.type === 'bearer' ? SECRET : Buffer.from(`puller:${SECRET}`).toString('base64');
      for (const body of bodies) {
        answer = (authorization) => ({ status: 500, body: body(authorization) });
        const error = await failure(auth);
        expect(error.message).not.toContain(sent.slice(0, 4));
        expect(error.message).toContain(`${auth.type === 'bearer' ? 'Bearer' : 'Basic'} [redacted]`);
      }
    }
  });

  it('a secret holding a run of blanks is cut out before whitespace is collapsed', async () => {
    const spaced = 'tok  ABC-0123456789';
    answer = (authorization) => ({ status: 502, body: `proxy error for ${authorization}` });
    const error = await failure({ type: 'bearer' }, spaced);
    expect(error.message).not.toContain('ABC-0123456789');
    expect(error.message).toContain('proxy error for Bearer [redacted]');
  });

  it('an answer over the per-answer bound the caller set is refused, saying what to change', async () => {
    answer = () => ({ status: 200, body: JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [], padding: 'x'.repeat(2 << 20) } }) });
    const client = prometheusClient(source({ type: 'none' }), { maxAnswerBytes: 1 << 20, sleep: async () => undefined });
    await expect(client.query('up', 1_700_000_000)).rejects.toThrow(
      /^the answer is more than 1 MB, the most one answer may take: lower max_points_per_request in metric-sources, or aggregate the query by the cluster label/,
    );
  });

  it('a redirect is refused, and says so', async () => {
    answer = () => ({ status: 302, body: '' });
    const error = await failure({ type: 'bearer' });
    expect(error.message).toBe(`127.0.0.1:${new URL(url).port} answered with a redirect, which is not followed: set url to where it leads`);
  });

  it('a sigv4 source over plain http to another machine is not signed (a version stored before that was refused)', async () => {
    const error = await failure({ type: 'sigv4', region: 'us-east-1', service: 'aps' }, SECRET, 'http://aps.internal.example:9090');
    expect(error.message).toMatch(/^sigv4 needs an https URL/);
  });

  it('a secret a header cannot carry is refused by name, not quoted by fetch', async () => {
    const error = await failure({ type: 'bearer' }, `{\n  "token": "${SECRET}"\n}`);
    expect(error.message).toBe('the PROMETHEUS_CREDENTIAL secret holds a line break, which no HTTP header can carry');
  });

  it('a server nobody answers: the kind of failure only', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await failure({ type: 'bearer' }, SECRET, `http://127.0.0.1:${port}`);
    expect(error.message).toBe(`127.0.0.1:${port} unreachable: connection failed (ECONNREFUSED)`);
  });
});

describe('point values', () => {
  const vector = (value: string) =>
    JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{ metric: { cluster_id: 'c' }, value: [1_700_000_000, value] }] } });
  const read = (value: string) => {
    answer = () => ({ status: 200, body: vector(value) });
    return prometheusClient(source({ type: 'none' }), { sleep: async () => undefined }).query('up', 1_700_000_000);
  };

  it('are read as Prometheus writes them: decimals, exponents, NaN and the infinities', async () => {
    const spellings: [string, number][] = [
      ['42', 42],
      ['-2.5', -2.5],
      ['.5', 0.5],
      ['1e3', 1000],
      ['1.5E-3', 0.0015],
      ['+7', 7],
      ['7.', 7],
      [`1${'0'.repeat(308)}`, 1e308], // Go's 'f' format writes every digit
      [`0.${'0'.repeat(323)}5`, 5e-324],
      ['NaN', Number.NaN],
      ['+Inf', Number.POSITIVE_INFINITY],
      ['Inf', Number.POSITIVE_INFINITY],
      ['-Inf', Number.NEGATIVE_INFINITY],
    ];
    for (const [text, value] of spellings) expect((await read(text))[0]?.value, text).toBe(value);
  });

  it('anything else is a malformed answer, not a number Number() would make of it', async () => {
    // The long ones fail at their end: read in one pass, not split every way first (minutes, before).
    const long = [`${'1'.repeat(100_000)}x`, `${'1'.repeat(100_000)}.${'1'.repeat(100_000)}x`, `.${'1'.repeat(100_000)}e`];
    for (const text of ['', ' ', '0x10', '0b1', '0o7', ' 1', '1 ', 'Infinity', '1_000', '--1', 'nan', '.', '1e', 'e5', ...long]) {
      const error = await read(text).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, JSON.stringify(text).slice(0, 40)).toBeInstanceOf(PrometheusError);
      expect((error as PrometheusError).message).toBe(
        'malformed answer: a point value that is not a number as Prometheus writes one (a decimal, NaN, +Inf or -Inf)',
      );
    }
  });
});

describe('a source stored before its URL or username was refused when written', () => {
  it('is not called: a query or fragment, a link-local host, a basic username with a colon', async () => {
    let requests = 0;
    answer = () => {
      requests++;
      return { status: 200, body: '{"status":"success","data":{"resultType":"vector","result":[]}}' };
    };
    const cases: [PrometheusSource['auth'], string, RegExp][] = [
      [{ type: 'none' }, `${url}/?api_key=X`, /^url: no query or fragment in the URL/],
      [{ type: 'none' }, `${url}/#x`, /^url: no query or fragment in the URL/],
      [{ type: 'none' }, 'http://169.254.169.254/', /^url: not a link-local address/],
      [{ type: 'basic', username: 'a:b' }, url, /^auth\.username: a basic username holds no ':'/],
    ];
    for (const [auth, at, message] of cases) expect((await failure(auth, SECRET, at)).message).toMatch(message);
    expect(requests).toBe(0);
  });
});

describe("the pull's time budget", () => {
  it('ends a request in flight when the signal aborts, without retrying it, and starts none after', async () => {
    // A server that never answers: only the caller's signal (well before the 2 s timeout) ends the request.
    let requests = 0;
    const silent = createServer((req) => {
      requests++;
      req.resume();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const stop = new AbortController();
      const client = prometheusClient(source({ type: 'none' }, `http://127.0.0.1:${(silent.address() as AddressInfo).port}`), {
        sleep: async () => undefined,
        signal: stop.signal,
      });
      const pending = client.query('up', 1_700_000_000).then(
        () => undefined,
        (e: unknown) => e,
      );
      while (requests === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      stop.abort();
      const error = await pending;
      expect(error).toBeInstanceOf(PrometheusError);
      expect((error as PrometheusError).message).toBe("stopped: the pull's time is up");
      expect((error as PrometheusError).retryable).toBe(false);
      await expect(client.query('up', 1_700_000_000)).rejects.toThrow("stopped: the pull's time is up");
      expect(requests).toBe(1);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('partial answers and abandoned queries', () => {
  it('every query asks the server to stop when the client gives up, and Thanos for no partial answer', async () => {
    answer = () => ({ status: 200, body: '{"status":"success","data":{"resultType":"matrix","result":[]}}' });
    const client = prometheusClient(source({ type: 'none' }), { sleep: async () => undefined });
    await client.queryRange('up', 1_700_000_000, 1_700_000_600, 60);
    expect(Object.fromEntries(lastForm)).toEqual({ query: 'up', start: '1700000000', end: '1700000600', step: '60', timeout: '2s', partial_response: 'false' });
    answer = () => ({ status: 200, body: '{"status":"success","data":{"resultType":"vector","result":[]}}' });
    await client.query('up', 1_700_000_000);
    expect(Object.fromEntries(lastForm)).toEqual({ query: 'up', time: '1700000000', timeout: '2s', partial_response: 'false' });
  });

  it('native histograms, in a range or an instant answer, are refused saying how to ask for numbers, not as a malformed answer', async () => {
    const histogram = '[1700000000,{"count":"3","sum":"1.5","buckets":[[0,"0","1","3"]]}]';
    const client = prometheusClient(source({ type: 'none' }), { sleep: async () => undefined });
    const refused = async (ask: () => Promise<unknown>) => {
      const error = await ask().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(PrometheusError);
      expect((error as PrometheusError).message).toMatch(/^the query answers native histograms, which are not numbers: wrap it .*histogram_quantile/);
      expect((error as PrometheusError).retryable).toBe(false);
    };
    for (const values of ['', `"values":[[1700000000,"1"]],`]) {
      answer = () => ({
        status: 200,
        body: `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"cluster":"a"},${values}"histograms":[${histogram}]}]}}`,
      });
      await refused(() => client.queryRange('latency', 1_700_000_000, 1_700_000_600, 60));
    }
    // An instant sample of a native histogram: `histogram` instead of `value` (the inventory pull's query).
    answer = () => ({
      status: 200,
      body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"cluster":"a"},"histogram":${histogram}}]}}`,
    });
    await refused(() => client.query('latency', 1_700_000_000));
  });

  it("a partial answer (VictoriaMetrics' isPartial) is not data: retried, then a passing failure", async () => {
    answer = () => ({
      status: 200,
      body: '{"status":"success","isPartial":true,"data":{"resultType":"matrix","result":[{"metric":{"cluster":"a"},"values":[[1700000000,"1"]]}]}}',
    });
    const waits: number[] = [];
    const client = prometheusClient(source({ type: 'none' }), { sleep: async (ms) => void waits.push(ms) });
    const before = requests;
    const error = await client.queryRange('up', 1_700_000_000, 1_700_000_600, 60).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PrometheusError);
    expect((error as PrometheusError).retryable).toBe(true);
    expect((error as PrometheusError).message).toContain('a partial answer (a storage node did not answer); not stored, asked again');
    expect(requests - before).toBe(3);
    expect(waits).toHaveLength(2);
  });

  it("a storage's failure (Prometheus' warning beside a success) is a partial answer; the engine's notes and Thanos' empty range are not", async () => {
    const body = (warnings: string[]) =>
      JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [{ metric: { cluster: 'a' }, values: [[1700000000, '1']] }] }, warnings });
    const client = prometheusClient(source({ type: 'none' }), { sleep: async () => undefined });
    const ask = () =>
      client.queryRange('up', 1_700_000_000, 1_700_000_600, 60, []).then(
        () => undefined,
        (e: unknown) => e as PrometheusError,
      );
    for (const note of [
      'PromQL warning: quantile value should be between 0 and 1',
      'PromQL info: metric might not be a counter, name does not end in _total/_sum/_count/_bucket: "up"',
      '12 more warning annotations omitted',
      '3 more annotations omitted',
      'metric might not be a counter (name does not end in _total/_sum/_count): up', // before the prefix came
      'No StoreAPIs matched for this query', // Thanos, where no store holds the range: nothing is missing
    ]) {
      answer = () => ({ status: 200, body: body([note]) });
      expect(await ask(), note).toBeUndefined();
    }
    answer = () => ({
      status: 200,
      body: body(['PromQL info: x', 'remote_read: error sending request: Post "http://lts:9201/read": dial tcp: connection refused']),
    });
    const before = requests;
    const error = await ask();
    expect(error).toBeInstanceOf(PrometheusError);
    expect(error!.retryable).toBe(true);
    expect(error!.message).toContain('a partial answer (a storage Prometheus reads did not answer: remote_read: error sending request: Post');
    expect(requests - before).toBe(3);
    // A streamed remote-read answer that broke off: Prometheus passes the bare error on as a warning.
    answer = () => ({ status: 200, body: body(['context deadline exceeded']) });
    expect((await ask())?.message).toContain('a partial answer (a storage Prometheus reads did not answer: context deadline exceeded)');
  });
});

describe('a real Prometheus whose remote-read storage is down', () => {
  it('answers success with its own series and a warning: the client takes it as partial, not as the data', { timeout: 60_000 }, async () => {
    const now = Date.now();
    const samples = Array.from({ length: 30 }, (_, i): [number, number] => [now - 3_600_000 + i * 60_000, i]);
    // Debian's Prometheus 2.42, backfilled locally, reading a storage nobody listens for (port 9, discard).
    const prom = await startPrometheus({
      history: openMetrics([{ name: 'fh_qps', labels: { cluster_id: 'a' }, samples }]),
      remoteRead: [{ url: 'http://127.0.0.1:9/read', read_recent: true, remote_timeout: '2s' }],
    });
    try {
      const [start, end] = [Math.floor((now - 3_000_000) / 1000), Math.floor((now - 600_000) / 1000)];
      // What it says on the wire: success, the local series, and the storage's failure as a warning.
      const raw = await (
        await fetch(`${prom.url}/api/v1/query_range`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ query: 'fh_qps', start: String(start), end: String(end), step: '60' }),
        })
      ).json();
      expect(raw).toMatchObject({
        status: 'success',
        data: { result: [{ metric: { cluster_id: 'a' } }] },
        warnings: [expect.stringMatching(/^remote_read: /)],
      });
      const client = prometheusClient(source({ type: 'none' }, prom.url), { sleep: async () => undefined });
      const error = await client.queryRange('fh_qps', start, end, 60, []).then(
        () => undefined,
        (e: unknown) => e as PrometheusError,
      );
      expect(error).toBeInstanceOf(PrometheusError);
      expect(error!.retryable).toBe(true);
      expect(error!.message).toMatch(/a partial answer \(a storage Prometheus reads did not answer: remote_read: error sending request/);
    } finally {
      await prom.stop();
    }
  });
});

describe('a Prometheus answer is Unicode text', () => {
  it('a label that escapes half a surrogate pair arrives with U+FFFD; a whole pair is kept', async () => {
    answer = () => ({
      status: 200,
      body: String.raw`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"cluster":"db-\ud83d","team":"\ud83d\ude80","\udc00":"x"},"value":[1700000000,"1"]}]}}`,
    });
    const [sample] = await prometheusClient(source({ type: 'none' })).query('up', 1_700_000_000);
    expect(sample?.labels).toEqual({ cluster: 'db-\uFFFD', team: '\u{1F680}', '\uFFFD': 'x' });
  });
});
