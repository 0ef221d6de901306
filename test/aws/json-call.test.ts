// The signed JSON-protocol call behind DynamoDB and Secrets Manager, against a local server
// speaking that protocol: each request it receives must verify under the AWS SDK's own
// SigV4 signer (@smithy/signature-v4, an implementation independent of the one that
// signed it), and it answers what AWS answers when things go wrong (throttling, a 500, a
// validation error, a reset, an answer too large, no answer at all).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AwsError, awsJsonCall, type AwsJsonService } from '../../shared/aws/json-call.js';
import { coreSettings } from '../../shared/config/core.js';
import { resetSettings } from '../../shared/config/env.js';
import { AnswerTooLarge } from '../../shared/http/outbound.js';

interface Received {
  target: string;
  body: string;
  verified: boolean;
}
type Reply = (req: IncomingMessage, res: import('node:http').ServerResponse) => void;

let server: Server;
let url: string;
const received: Received[] = [];
/** The credential scope of each request's signature: `<key id>/<date>/<region>/<service>/aws4_request`. */
const scopes: string[] = [];
let replies: Reply[] = [];
const CREDENTIALS = { accessKeyId: 'AKIDTESTKEY', secretAccessKey: 'secret/key+with=odd chars', sessionToken: 'session-token' };

const service = (): AwsJsonService => ({ signingName: 'dynamodb', targetPrefix: 'DynamoDB_20120810', jsonVersion: '1.0', endpoint: () => new URL(url) });

/** Whether the request as received carries the signature the SDK's signer computes for it, at the date it says. */
async function verifies(req: IncomingMessage, body: string): Promise<boolean> {
  const authorization = String(req.headers.authorization ?? '');
  const signed = /SignedHeaders=([^,]+)/.exec(authorization)?.[1]?.split(';') ?? [];
  const headers: Record<string, string> = {};
  for (const name of signed) headers[name] = String(req.headers[name]);
  const date = String(req.headers['x-amz-date']);
  const signingDate = new Date(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`);
  const signer = new SignatureV4({
    credentials: CREDENTIALS,
    region: 'eu-west-1',
    service: 'dynamodb',
    sha256: Hash.bind(null, 'sha256'),
    applyChecksum: false,
  });
  const [hostname, port] = String(req.headers.host).split(':');
  const expected = await signer.sign(
    { method: req.method!, protocol: 'http:', hostname: hostname!, port: Number(port), path: req.url!, query: {}, headers, body },
    { signingDate, unsignableHeaders: new Set(), signableHeaders: new Set(signed) },
  );
  return expected.headers.authorization === authorization && signed.includes('host') && signed.includes('x-amz-target');
}

const json =
  (status: number, payload: unknown): Reply =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' });
    res.end(JSON.stringify(payload));
  };

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', async () => {
      received.push({ target: String(req.headers['x-amz-target']), body, verified: await verifies(req, body) });
      scopes.push(/Credential=([^,]+)/.exec(String(req.headers.authorization))?.[1] ?? '');
      (replies.shift() ?? json(200, { Item: { pk: { S: 'p' } } }))(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  Object.assign(process.env, {
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    AWS_SESSION_TOKEN: CREDENTIALS.sessionToken,
  });
  resetSettings();
  received.length = 0;
  scopes.length = 0;
  replies = [];
});

describe('a signed JSON-protocol call', () => {
  it('sends what it signed: the request as received verifies under the SDK signer, host and port included', async () => {
    const input = { TableName: 'fleet-health-users', Key: { pk: { S: 'USER#ü' }, sk: { S: 'PROFILE' } } };
    expect(await awsJsonCall(service(), 'GetItem', input)).toEqual({ Item: { pk: { S: 'p' } } });
    expect(received).toEqual([{ target: 'DynamoDB_20120810.GetItem', body: JSON.stringify(input), verified: true }]);
  });

  it('a signature with other credentials does not verify (the check can fail)', async () => {
    process.env.AWS_SECRET_ACCESS_KEY = 'another secret';
    resetSettings();
    await awsJsonCall(service(), 'GetItem', {});
    expect(received[0]!.verified).toBe(false);
  });

  it('retries throttling and 5xx answers as the SDK does, then answers', async () => {
    replies = [
      json(400, { __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException', message: 'slow down' }),
      json(503, { __type: 'ServiceUnavailable', message: 'try again' }),
      json(200, { Count: 1 }),
    ];
    expect(await awsJsonCall(service(), 'Query', { TableName: 't' })).toEqual({ Count: 1 });
    expect(received.map((r) => r.verified)).toEqual([true, true, true]);
  });

  it('gives up after maxAttempts with the last error, typed and named as the SDK names it', async () => {
    replies = Array.from({ length: 4 }, () => json(500, { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'broken' }));
    const error = await awsJsonCall(service(), 'PutItem', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AwsError);
    expect(error).toMatchObject({ name: 'InternalServerError', message: 'broken', status: 500 });
    expect(received).toHaveLength(4);
  });

  it('does not retry a client error, and keeps its other fields', async () => {
    const reasons = [{ Code: 'None' }, { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' }];
    replies = [json(400, { __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException', Message: 'cancelled', CancellationReasons: reasons })];
    const error = (await awsJsonCall(service(), 'TransactWriteItems', {}).catch((e: unknown) => e)) as AwsError;
    expect(error).toMatchObject({ name: 'TransactionCanceledException', message: 'cancelled', status: 400, fields: { CancellationReasons: reasons } });
    expect(received).toHaveLength(1);
  });

  it('retries a connection reset in the middle of an answer', async () => {
    replies = [
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', 'content-length': '100' });
        res.write('{"Items":[');
        setTimeout(() => res.socket?.destroy(), 10);
      },
    ];
    expect(await awsJsonCall(service(), 'Query', {})).toEqual({ Item: { pk: { S: 'p' } } });
    expect(received).toHaveLength(2);
  });

  it('refuses an answer larger than the call takes, without retrying it', async () => {
    replies = [json(200, { SecretString: 'x'.repeat(4096) })];
    await expect(awsJsonCall(service(), 'GetSecretValue', {}, { maxAnswerBytes: 1024 })).rejects.toBeInstanceOf(AnswerTooLarge);
    expect(received).toHaveLength(1);
  });

  it('ends with its signal, retries included', async () => {
    replies = [() => undefined]; // never answers
    const started = received.length;
    await expect(awsJsonCall(service(), 'GetItem', {}, { signal: AbortSignal.timeout(200) })).rejects.toMatchObject({ name: 'AbortError' });
    expect(received.length - started).toBe(1);
  });

  it('names what is missing when there is no region', async () => {
    delete process.env.AWS_REGION;
    delete process.env.AWS_DEFAULT_REGION;
    resetSettings();
    await expect(awsJsonCall(service(), 'GetItem', {})).rejects.toThrow('AWS_REGION is not set: dynamodb cannot be reached.');
    expect(received).toHaveLength(0);
  });
});

describe('DynamoDB Local (npm start sets DYNAMODB_LOCAL)', () => {
  afterEach(() => {
    delete process.env.DYNAMODB_LOCAL;
    delete process.env.DYNAMODB_LOCAL_KEY;
    delete process.env.AWS_ENDPOINT_URL_DYNAMODB;
  });

  it("signs with static credentials, and region local when none is set, not the process's own", async () => {
    delete process.env.AWS_REGION;
    Object.assign(process.env, { DYNAMODB_LOCAL: 'true', AWS_ENDPOINT_URL_DYNAMODB: url });
    await awsJsonCall({ ...service(), endpoint: () => coreSettings().dynamoEndpoint }, 'GetItem', {});
    expect(scopes).toEqual([expect.stringMatching(/^local\/\d{8}\/local\/dynamodb\/aws4_request$/)]);
    expect(process.env.AWS_ACCESS_KEY_ID).toBe(CREDENTIALS.accessKeyId);
  });

  it("signs with npm start's key for its data, for region local whatever AWS_REGION says (its database is the key's and the region's)", async () => {
    const key = 'K3y0fThisDataFolder0123456789ab';
    Object.assign(process.env, { DYNAMODB_LOCAL: 'true', DYNAMODB_LOCAL_KEY: key, AWS_ENDPOINT_URL_DYNAMODB: url });
    await awsJsonCall({ ...service(), endpoint: () => coreSettings().dynamoEndpoint }, 'GetItem', {});
    expect(scopes).toEqual([expect.stringMatching(new RegExp(`^${key}/\\d{8}/local/dynamodb/aws4_request$`))]);
  });

  it('refuses a key DynamoDB Local would not take (letters and digits only)', () => {
    Object.assign(process.env, { DYNAMODB_LOCAL: 'true', DYNAMODB_LOCAL_KEY: 'not-a-key_0123456789', AWS_ENDPOINT_URL_DYNAMODB: url });
    expect(() => coreSettings()).toThrow('DYNAMODB_LOCAL_KEY must be 16 to 128 letters and digits');
  });

  it("signs any other endpoint with the process's credentials", async () => {
    Object.assign(process.env, { DYNAMODB_LOCAL: 'true', AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:9/' });
    await awsJsonCall(service(), 'GetSecretValue', {});
    expect(received.map((r) => r.verified)).toEqual([true]);
    expect(scopes[0]).toMatch(/^AKIDTESTKEY\/\d{8}\/eu-west-1\/dynamodb\/aws4_request$/);
  });

  it('is refused without the endpoint it names', () => {
    process.env.DYNAMODB_LOCAL = 'true';
    expect(() => coreSettings()).toThrow('DYNAMODB_LOCAL needs AWS_ENDPOINT_URL_DYNAMODB, the endpoint of DynamoDB Local.');
  });
});
