// The fake Amazon Managed Service for Prometheus: its SigV4 verifier (node:crypto
// only) accepts AWS's published test vectors and refuses each one altered; over the
// wire it accepts what the AWS SDK's signer (@smithy/signature-v4, the puller's)
// signs, proxies it to a real Prometheus, and answers a tampered, mis-keyed,
// mis-scoped or stale request 403 with AWS's message.
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalQueryString, canonicalUri, type FakeAps, signingKey, startFakeAps, type SigV4Expectation, verifySigV4 } from '../support/fake-aps.js';
import { openMetrics, type RunningPrometheus, startPrometheus } from '../support/prometheus.js';

const MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';

// AWS's example credentials and time, shared by the IAM example and the test suite.
const EXAMPLE = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  region: 'us-east-1',
  now: () => Date.UTC(2015, 7, 30, 12, 36, 0),
};
const SUITE_HEADERS = ['Host', 'example.amazonaws.com', 'X-Amz-Date', '20150830T123600Z'];

function authorization(service: string, signedHeaders: string, signature: string, date = '20150830', region = 'us-east-1', key = 'AKIDEXAMPLE'): string {
  return `AWS4-HMAC-SHA256 Credential=${key}/${date}/${region}/${service}/aws4_request, SignedHeaders=${signedHeaders}, Signature=${signature}`;
}

// "Create a signed AWS API request" (IAM ListUsers), AWS's worked example.
const IAM = {
  method: 'GET',
  target: '/?Action=ListUsers&Version=2010-05-08',
  headers: ['Host', 'iam.amazonaws.com', 'Content-Type', 'application/x-www-form-urlencoded; charset=utf-8', 'X-Amz-Date', '20150830T123600Z'],
  signature: '5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7',
  signedHeaders: 'content-type;host;x-amz-date',
};

function iamRequest(changes: { target?: string; headers?: string[]; signature?: string; signedHeaders?: string; auth?: string } = {}) {
  return {
    method: IAM.method,
    target: changes.target ?? IAM.target,
    rawHeaders: [
      ...(changes.headers ?? IAM.headers),
      'Authorization',
      changes.auth ?? authorization('iam', changes.signedHeaders ?? IAM.signedHeaders, changes.signature ?? IAM.signature),
    ],
    body: Buffer.alloc(0),
  };
}
const IAM_EXPECTED: SigV4Expectation = { ...EXAMPLE, service: 'iam' };

/** Vectors of AWS's SigV4 test suite (aws-sig-v4-test-suite, service `service`). */
const SUITE: { name: string; method?: string; target: string; headers?: string[]; body?: string; signedHeaders?: string; signature: string; token?: string }[] =
  [
    { name: 'get-vanilla', target: '/', signature: '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31' },
    {
      name: 'get-vanilla-query-order-key-case',
      target: '/?Param2=value2&Param1=value1',
      signature: 'b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500',
    },
    {
      name: 'get-vanilla-query-order-value',
      target: '/?Param1=value2&Param1=value1',
      signature: '5772eed61e12b33fae39ee5e7012498b51d56abc0abb7c60486157bd471c4694',
    },
    { name: 'get-vanilla-utf8-query', target: '/?%E1%88%B4=bar', signature: '2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04' },
    {
      name: 'get-unreserved',
      target: '/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
      signature: '07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f',
    },
    { name: 'get-slashes', target: '//example//', signature: '9a624bd73a37c9a373b5312afbebe7a714a789de108f0bdfe846570885f57e84' },
    {
      name: 'get-header-value-trim',
      target: '/',
      headers: ['My-Header1', ' value1', 'My-Header2', '"a   b   c"'],
      signedHeaders: 'host;my-header1;my-header2;x-amz-date',
      signature: 'acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736',
    },
    {
      name: 'get-header-value-order',
      target: '/',
      headers: ['My-Header1', 'value4', 'My-Header1', 'value1', 'My-Header1', 'value3', 'My-Header1', 'value2'],
      signedHeaders: 'host;my-header1;x-amz-date',
      signature: '08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01',
    },
    {
      name: 'get-header-key-duplicate',
      target: '/',
      headers: ['My-Header1', 'value2', 'My-Header1', 'value2', 'My-Header1', 'value1'],
      signedHeaders: 'host;my-header1;x-amz-date',
      signature: 'c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea',
    },
    {
      name: 'post-x-www-form-urlencoded',
      method: 'POST',
      target: '/',
      headers: ['Content-Type', 'application/x-www-form-urlencoded'],
      body: 'Param1=value1',
      signedHeaders: 'content-type;host;x-amz-date',
      signature: 'ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a',
    },
    {
      name: 'get-vanilla with a session token',
      target: '/',
      headers: ['X-Amz-Security-Token', '6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267'],
      signedHeaders: 'host;x-amz-date;x-amz-security-token',
      signature: '07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8',
      token: '6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267',
    },
  ];

describe('verifySigV4 against AWS’s published examples', () => {
  it('accepts the IAM ListUsers example, building AWS’s canonical request, string to sign and signing key', () => {
    const verdict = verifySigV4(iamRequest(), IAM_EXPECTED);
    expect(verdict).toEqual({
      ok: true,
      canonicalRequest: [
        'GET',
        '/',
        'Action=ListUsers&Version=2010-05-08',
        'content-type:application/x-www-form-urlencoded; charset=utf-8',
        'host:iam.amazonaws.com',
        'x-amz-date:20150830T123600Z',
        '',
        'content-type;host;x-amz-date',
        'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      ].join('\n'),
      stringToSign: [
        'AWS4-HMAC-SHA256',
        '20150830T123600Z',
        '20150830/us-east-1/iam/aws4_request',
        'f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59',
      ].join('\n'),
    });
    expect(
      createHash('sha256')
        .update((verdict as { canonicalRequest: string }).canonicalRequest)
        .digest('hex'),
    ).toBe('f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59');
    expect(signingKey(EXAMPLE.secretAccessKey, '20150830', 'us-east-1', 'iam').toString('hex')).toBe(
      'c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9',
    );
  });

  it.each(SUITE)('accepts the test suite’s $name, and refuses it with one signature digit changed', (vector) => {
    const request = (signature: string) => ({
      method: vector.method ?? 'GET',
      target: vector.target,
      rawHeaders: [
        ...SUITE_HEADERS,
        ...(vector.headers ?? []),
        'Authorization',
        authorization('service', vector.signedHeaders ?? 'host;x-amz-date', signature),
      ],
      body: Buffer.from(vector.body ?? ''),
    });
    const expected = { ...EXAMPLE, service: 'service', sessionToken: vector.token };
    const verdict = verifySigV4(request(vector.signature), expected);
    expect(verdict.ok, JSON.stringify(verdict)).toBe(true);
    const flipped = `${vector.signature.slice(0, -1)}${vector.signature.endsWith('0') ? '1' : '0'}`;
    expect(verifySigV4(request(flipped), expected)).toMatchObject({ ok: false, reason: 'signature mismatch', message: MISMATCH });
  });

  it('builds canonical URIs and query strings as AWS documents them', () => {
    expect(canonicalUri('/example space/')).toBe('/example%20space/');
    expect(canonicalUri('/documents%20and%20settings/')).toBe('/documents%2520and%2520settings/');
    expect(canonicalUri('/./example/../other//x/')).toBe('/other/x/');
    expect(canonicalUri('')).toBe('/');
    expect(canonicalQueryString('b=2&a=%7e&c&a=1')).toBe('a=1&a=~&b=2&c=');
    expect(canonicalQueryString('query=sum%20by%20(c)%20(x)&step=60')).toBe('query=sum%20by%20%28c%29%20%28x%29&step=60');
    // A plus is a plus (RFC 3986), not a space.
    expect(canonicalQueryString('q=a+b')).toBe('q=a%2Bb');
  });

  it('refuses the IAM example with a tampered query parameter, a wrong secret, region, service or access key', () => {
    expect(verifySigV4(iamRequest({ target: '/?Action=ListUsers&Version=2010-05-09' }), IAM_EXPECTED)).toMatchObject({
      ok: false,
      reason: 'signature mismatch',
      message: MISMATCH,
    });
    expect(verifySigV4(iamRequest({ target: '/?Action=ListUsers&Version=2010-05-08&Marker=x' }), IAM_EXPECTED)).toMatchObject({
      reason: 'signature mismatch',
    });
    expect(verifySigV4(iamRequest({ target: '/users?Action=ListUsers&Version=2010-05-08' }), IAM_EXPECTED)).toMatchObject({ reason: 'signature mismatch' });
    expect(verifySigV4(iamRequest(), { ...IAM_EXPECTED, secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEz' })).toMatchObject({
      ok: false,
      reason: 'signature mismatch',
      message: MISMATCH,
    });
    expect(verifySigV4(iamRequest(), { ...IAM_EXPECTED, region: 'eu-west-1' })).toMatchObject({
      ok: false,
      reason: 'credential scoped to region us-east-1, not eu-west-1',
      message: 'Credential should be scoped to a valid region.',
    });
    expect(verifySigV4(iamRequest(), { ...IAM_EXPECTED, service: 'aps' })).toMatchObject({
      ok: false,
      message: "Credential should be scoped to correct service: 'aps'.",
    });
    expect(verifySigV4(iamRequest(), { ...IAM_EXPECTED, accessKeyId: 'AKIDOTHER' })).toMatchObject({
      ok: false,
      reason: 'unknown access key AKIDEXAMPLE',
      message: 'The security token included in the request is invalid.',
    });
  });

  it('refuses a signed header changed in transit, a header not sent, unsigned host, a bad scope date', () => {
    const headers = [...IAM.headers];
    headers[3] = 'application/json';
    expect(verifySigV4(iamRequest({ headers }), IAM_EXPECTED)).toMatchObject({ reason: 'signature mismatch' });
    expect(verifySigV4(iamRequest({ signedHeaders: 'content-type;host;x-amz-date;x-extra' }), IAM_EXPECTED)).toMatchObject({
      reason: 'signed headers not sent: x-extra',
    });
    expect(verifySigV4(iamRequest({ signedHeaders: 'content-type;x-amz-date' }), IAM_EXPECTED)).toMatchObject({ reason: 'host is not signed' });
    expect(verifySigV4(iamRequest({ signedHeaders: 'host;content-type;x-amz-date' }), IAM_EXPECTED)).toMatchObject({
      reason: 'SignedHeaders not lowercase and sorted: host;content-type;x-amz-date',
    });
    expect(verifySigV4(iamRequest({ auth: authorization('iam', IAM.signedHeaders, IAM.signature, '20150831') }), IAM_EXPECTED)).toMatchObject({
      reason: "credential date 20150831 is not X-Amz-Date's 20150830",
    });
    expect(verifySigV4(iamRequest({ auth: 'Bearer x' }), IAM_EXPECTED)).toMatchObject({ ok: false, reason: 'malformed Authorization header: Bearer x' });
    expect(verifySigV4({ ...iamRequest(), rawHeaders: IAM.headers }, IAM_EXPECTED)).toMatchObject({
      reason: 'no Authorization header',
      message: 'Missing Authentication Token',
    });
  });

  it('refuses an X-Amz-Date more than 5 minutes from now, either way', () => {
    const at = (ms: number) => ({ ...IAM_EXPECTED, now: () => EXAMPLE.now() + ms });
    expect(verifySigV4(iamRequest(), at(5 * 60_000)).ok).toBe(true);
    expect(verifySigV4(iamRequest(), at(-5 * 60_000)).ok).toBe(true);
    expect(verifySigV4(iamRequest(), at(5 * 60_000 + 1000))).toMatchObject({
      ok: false,
      message: 'Signature expired: 20150830T123600Z is now earlier than 20150830T123601Z (20150830T124101Z - 5 min.)',
    });
    expect(verifySigV4(iamRequest(), at(-5 * 60_000 - 1000))).toMatchObject({
      ok: false,
      message: 'Signature not yet current: 20150830T123600Z is still later than 20150830T123559Z (20150830T123059Z + 5 min.)',
    });
    expect(verifySigV4(iamRequest(), { ...IAM_EXPECTED, now: Date.now })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/more than 300000 ms before now/),
    });
  });

  it('checks the session token: required and equal when configured, signed, refused when not configured', () => {
    const vector = SUITE.find((v) => v.token)!;
    const request = (headers: string[], signedHeaders = vector.signedHeaders!) => ({
      method: 'GET',
      target: '/',
      rawHeaders: [...SUITE_HEADERS, ...headers, 'Authorization', authorization('service', signedHeaders, vector.signature)],
      body: Buffer.alloc(0),
    });
    const expected = { ...EXAMPLE, service: 'service', sessionToken: vector.token };
    expect(verifySigV4(request(vector.headers!), expected).ok).toBe(true);
    expect(verifySigV4(request(vector.headers!), { ...expected, sessionToken: 'another' })).toMatchObject({
      reason: 'X-Amz-Security-Token is not the session token',
      message: 'The security token included in the request is invalid.',
    });
    expect(verifySigV4(request([], 'host;x-amz-date'), expected)).toMatchObject({ reason: 'no X-Amz-Security-Token although the credentials are temporary' });
    expect(verifySigV4(request(vector.headers!, 'host;x-amz-date'), expected)).toMatchObject({ reason: 'X-Amz-Security-Token is not signed' });
    expect(verifySigV4(request(vector.headers!), { ...expected, sessionToken: undefined })).toMatchObject({
      reason: 'X-Amz-Security-Token sent with long-term credentials',
    });
  });
});

describe('startFakeAps in front of a real Prometheus', () => {
  const CREDS = { accessKeyId: 'AKIDTESTPULLER', secretAccessKey: 'test/secret+KEY', region: 'eu-central-1' };
  const minute = Math.floor(Date.now() / 60_000) * 60_000;
  const start = minute - 30 * 60_000;
  const end = minute - 5 * 60_000;
  let prometheus: RunningPrometheus;
  let aps: FakeAps;
  let temporary: FakeAps;

  beforeAll(async () => {
    const samples: [number, number][] = [];
    for (let t = start; t <= end; t += 60_000) samples.push([t, (t - start) / 60_000 + 0.5]);
    prometheus = await startPrometheus({
      history: openMetrics([
        { name: 'starrocks_fe_qps', labels: { cluster_id: 'c-1' }, samples },
        { name: 'starrocks_fe_qps', labels: { cluster_id: 'c-2' }, samples: samples.map(([t, v]) => [t, v * 2]) },
      ]),
    });
    aps = await startFakeAps({ upstream: prometheus.url, ...CREDS });
    temporary = await startFakeAps({ upstream: prometheus.url, ...CREDS, sessionToken: 'FwoGZXIvYXdzE//session+token==', workspaceId: 'ws-temp' });
  }, 60_000);

  afterAll(async () => {
    await aps?.stop();
    await temporary?.stop();
    await prometheus?.stop();
  });

  const rangeForm = () => ({
    query: 'sum by (cluster_id) (starrocks_fe_qps)',
    start: String(start / 1000),
    end: String(end / 1000),
    step: '60',
  });

  /** RFC 3986 query text (spaces as %20, which is what the SDK signs). */
  const wireQuery = (params: Record<string, string>) =>
    Object.entries(params)
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
      .join('&');

  interface SendOptions {
    method?: 'GET' | 'POST';
    base?: string;
    api?: string;
    params?: Record<string, string>;
    /** What actually goes out, when it differs from what was signed. */
    sentParams?: Record<string, string>;
    sentBody?: string;
    credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
    region?: string;
    service?: string;
    signingDate?: Date;
  }

  /** Signs with the AWS SDK's signer, as the puller does (shared/prometheus/sigv4.ts), and sends with fetch. */
  async function send(options: SendOptions = {}): Promise<Response> {
    const method = options.method ?? 'GET';
    const url = new URL(`${options.base ?? aps.url}${options.api ?? '/api/v1/query_range'}`);
    const params = options.params ?? rangeForm();
    const body = method === 'POST' ? wireQuery(params) : undefined;
    const signer = new SignatureV4({
      credentials: options.credentials ?? CREDS,
      region: options.region ?? CREDS.region,
      service: options.service ?? 'aps',
      sha256: Hash.bind(null, 'sha256'),
      applyChecksum: true,
    });
    const signed = await signer.sign(
      {
        method,
        protocol: url.protocol,
        hostname: url.hostname,
        port: Number(url.port),
        path: url.pathname,
        query: method === 'GET' ? params : {},
        headers: { host: url.host, ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
        body,
      },
      options.signingDate ? { signingDate: options.signingDate } : {},
    );
    const headers = Object.fromEntries(Object.entries(signed.headers).filter(([name]) => name.toLowerCase() !== 'host'));
    const query = method === 'GET' ? `?${wireQuery(options.sentParams ?? params)}` : '';
    return fetch(`${url.origin}${url.pathname}${query}`, { method, headers, body: options.sentBody ?? body });
  }

  async function direct(): Promise<unknown> {
    const res = await fetch(`${prometheus.url}/api/v1/query_range?${wireQuery(rangeForm())}`);
    return res.json();
  }

  /** A 403 with AWS's body, recorded as refused (for `reason`, when given). */
  async function expectRefused(res: Response, message: string | RegExp, reason?: string | RegExp, fake = aps): Promise<void> {
    expect(res.status).toBe(403);
    const body = (await res.json()) as { message: string };
    expect(Object.keys(body)).toEqual(['message']);
    if (typeof message === 'string') expect(body.message).toBe(message);
    else expect(body.message).toMatch(message);
    const last = fake.requests.at(-1)!;
    expect(last).toMatchObject({ authorized: false, status: 403 });
    if (typeof reason === 'string') expect(last.reason).toBe(reason);
    else if (reason) expect(last.reason).toMatch(reason);
  }

  it('answers a SigV4-signed GET query_range with what Prometheus answers', async () => {
    const res = await send();
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { result: { metric: { cluster_id: string }; values: [number, string][] }[] } };
    expect(body).toEqual(await direct());
    expect(body.data.result.map((r) => r.metric.cluster_id).sort()).toEqual(['c-1', 'c-2']);
    expect(body.data.result.find((r) => r.metric.cluster_id === 'c-2')!.values[0]).toEqual([start / 1000, '1']);
    expect(aps.requests.at(-1)).toMatchObject({ method: 'GET', path: '/workspaces/ws-test/api/v1/query_range', authorized: true, status: 200 });
  });

  it('answers a signed form-encoded POST to query_range and query', async () => {
    const res = await send({ method: 'POST' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(await direct());
    const instant = await send({ method: 'POST', api: '/api/v1/query', params: { query: 'starrocks_fe_qps{cluster_id="c-1"}', time: String(end / 1000) } });
    expect(instant.status).toBe(200);
    const value = ((await instant.json()) as { data: { result: { value: [number, string] }[] } }).data.result[0]!.value;
    expect(value).toEqual([end / 1000, '25.5']);
    expect(aps.requests.at(-1)).toMatchObject({ method: 'POST', path: '/workspaces/ws-test/api/v1/query', authorized: true, status: 200 });
  });

  it('relays what Prometheus says about a bad query', async () => {
    const res = await send({ api: '/api/v1/query', params: { query: 'sum(' } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ status: 'error', errorType: 'bad_data' });
  });

  it('refuses a query parameter changed after signing', async () => {
    await expectRefused(await send({ sentParams: { ...rangeForm(), step: '30' } }), MISMATCH, 'signature mismatch');
    await expectRefused(await send({ sentParams: { ...rangeForm(), query: 'starrocks_fe_qps' } }), MISMATCH, 'signature mismatch');
  });

  it('refuses a POST body changed after signing', async () => {
    const tampered = wireQuery({ ...rangeForm(), step: '30' });
    await expectRefused(
      await send({ method: 'POST', sentBody: tampered }),
      'The provided x-amz-content-sha256 header does not match what was computed.',
      /is not the body's hash/,
    );
  });

  it('refuses a wrong secret, a wrong region, a wrong service, an unknown key', async () => {
    await expectRefused(await send({ credentials: { ...CREDS, secretAccessKey: 'not-the-secret' } }), MISMATCH, 'signature mismatch');
    await expectRefused(
      await send({ region: 'us-east-1' }),
      'Credential should be scoped to a valid region.',
      'credential scoped to region us-east-1, not eu-central-1',
    );
    await expectRefused(await send({ service: 'execute-api' }), "Credential should be scoped to correct service: 'aps'.");
    await expectRefused(await send({ credentials: { ...CREDS, accessKeyId: 'AKIDSOMEONEELSE' } }), 'The security token included in the request is invalid.');
  });

  it('refuses a signature made more than 5 minutes ago', async () => {
    await expectRefused(
      await send({ signingDate: new Date(Date.now() - 6 * 60_000) }),
      /^Signature expired: \d{8}T\d{6}Z is now earlier than /,
      /more than 300000 ms before now/,
    );
  });

  it('refuses an unsigned request like AWS', async () => {
    const res = await fetch(`${aps.url}/api/v1/query_range?${wireQuery(rangeForm())}`);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ message: 'Missing Authentication Token' });
    expect(aps.requests.at(-1)).toMatchObject({ authorized: false, reason: 'no Authorization header', status: 403 });
  });

  it('with temporary credentials, requires the signed session token', async () => {
    const session = { ...CREDS, sessionToken: 'FwoGZXIvYXdzE//session+token==' };
    const ok = await send({ base: temporary.url, credentials: session });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual(await direct());
    const invalid = 'The security token included in the request is invalid.';
    await expectRefused(await send({ base: temporary.url }), invalid, 'no X-Amz-Security-Token although the credentials are temporary', temporary);
    await expectRefused(
      await send({ base: temporary.url, credentials: { ...session, sessionToken: 'another' } }),
      invalid,
      'X-Amz-Security-Token is not the session token',
      temporary,
    );
    // And the long-term credentials' workspace refuses a token.
    await expectRefused(
      await send({ credentials: session }),
      'The security token included in the request is invalid.',
      'X-Amz-Security-Token sent with long-term credentials',
    );
  });

  it('answers 404 for another workspace or another API, after checking the signature', async () => {
    const other = await send({ base: `${aps.origin}/workspaces/ws-other` });
    expect(other.status).toBe(404);
    const labels = await send({ api: '/api/v1/labels', params: {} });
    expect(labels.status).toBe(404);
    expect(aps.requests.at(-1)).toMatchObject({ authorized: true, status: 404 });
  });

  it('verifies raw wire headers: the IAM example sent over HTTP with its own Host header is accepted', async () => {
    const iam = await startFakeAps({ upstream: prometheus.url, ...EXAMPLE, service: 'iam' });
    try {
      const { origin } = new URL(iam.url);
      const status = await new Promise<number>((resolve, reject) => {
        const headers: Record<string, string> = {};
        for (let i = 0; i < IAM.headers.length; i += 2) headers[IAM.headers[i]!] = IAM.headers[i + 1]!;
        headers.Authorization = authorization('iam', IAM.signedHeaders, IAM.signature);
        const req = httpRequest(`${origin}${IAM.target}`, { method: 'GET', headers }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end();
      });
      // Authorized (the signature holds), then 404: `/` is not a workspace.
      expect(iam.requests).toEqual([
        { method: 'GET', path: '/', query: 'Action=ListUsers&Version=2010-05-08', authorized: true, reason: 'no such resource', status: 404 },
      ]);
      expect(status).toBe(404);
    } finally {
      await iam.stop();
    }
  });
});
