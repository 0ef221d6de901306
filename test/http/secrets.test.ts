// On AWS the JWT key and the ingest token come from Secrets Manager (the
// variables' _ARN twins). Tested with the real SDK client against a local
// server speaking the Secrets Manager JSON protocol.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetSigningKey, signAccessToken, verifyAccessToken } from '../../shared/auth/jwt.js';
import { forgetSecrets, secret } from '../../shared/config/secrets.js';

const SECRETS: Record<string, string> = {
  'arn:aws:secretsmanager:local:000000000000:secret:jwt-abc': 'k'.repeat(64),
  'arn:aws:secretsmanager:local:000000000000:secret:ingest-abc': 'ingest-token-from-secrets-manager',
};
const calls: string[] = [];
let server: Server;
let failNext = false;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { SecretId } = JSON.parse(body) as { SecretId: string };
      calls.push(`${req.headers['x-amz-target']} ${SecretId}`);
      if (failNext || !SECRETS[SecretId]) {
        failNext = false;
        res.writeHead(400, { 'Content-Type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify({ __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." }));
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify({ ARN: SecretId, Name: SecretId.split(':').pop(), SecretString: SECRETS[SecretId], VersionId: 'v1', CreatedDate: 1.7e9 }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_SECRETS_MANAGER: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    AWS_REGION: 'local',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  });
  delete process.env.JWT_SECRET;
  delete process.env.INGEST_TOKEN;
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  delete process.env.JWT_SECRET_ARN;
  delete process.env.INGEST_TOKEN_ARN;
});

describe('secrets from Secrets Manager', () => {
  it('loads the JWT key once per container and signs with it', async () => {
    process.env.JWT_SECRET_ARN = 'arn:aws:secretsmanager:local:000000000000:secret:jwt-abc';
    resetSigningKey();
    const token = await signAccessToken({ userId: 'u', username: 'u', name: 'U', email: 'u@example.com', role: 'viewer' });
    expect((await verifyAccessToken(token))?.principal.username).toBe('u');
    expect(calls.filter((c) => c.endsWith('jwt-abc'))).toEqual(['secretsmanager.GetSecretValue arn:aws:secretsmanager:local:000000000000:secret:jwt-abc']);
  });

  it('loads the ingest token, and retries after a failure instead of caching it', async () => {
    process.env.INGEST_TOKEN_ARN = 'arn:aws:secretsmanager:local:000000000000:secret:ingest-abc';
    forgetSecrets();
    failNext = true;
    // Named by its variable only: not the ARN, not the service's message.
    await expect(secret('INGEST_TOKEN')).rejects.toMatchObject({
      status: 503,
      message: 'INGEST_TOKEN could not be read from Secrets Manager; try again shortly.',
    });
    expect(await secret('INGEST_TOKEN')).toBe('ingest-token-from-secrets-manager');
    expect(await secret('INGEST_TOKEN')).toBe('ingest-token-from-secrets-manager');
    expect(calls.filter((c) => c.endsWith('ingest-abc'))).toHaveLength(2);
  });

  it('a JWT key Secrets Manager cannot give, or one too short, is a 503 for signing and verifying, tried again next time', async () => {
    process.env.JWT_SECRET_ARN = 'arn:aws:secretsmanager:local:000000000000:secret:jwt-abc';
    resetSigningKey();
    const token = await signAccessToken({ userId: 'u', username: 'u', name: 'U', email: 'u@example.com', role: 'viewer' });
    process.env.JWT_SECRET_ARN = 'arn:aws:secretsmanager:local:000000000000:secret:deleted';
    resetSigningKey();
    const unavailable = { status: 503, message: 'JWT_SECRET could not be read from Secrets Manager; try again shortly.' };
    await expect(verifyAccessToken(token)).rejects.toMatchObject(unavailable);
    await expect(signAccessToken({ userId: 'u', username: 'u', name: 'U', email: 'u@example.com', role: 'viewer' })).rejects.toMatchObject(unavailable);
    SECRETS['arn:aws:secretsmanager:local:000000000000:secret:deleted'] = 'short';
    resetSigningKey();
    await expect(verifyAccessToken(token)).rejects.toMatchObject({ status: 503, message: 'The JWT signing key must be at least 32 bytes.' });
    process.env.JWT_SECRET_ARN = 'arn:aws:secretsmanager:local:000000000000:secret:jwt-abc';
    resetSigningKey();
    expect((await verifyAccessToken(token))?.principal.username).toBe('u');
  });

  it('prefers the plain variable (local runs) and is undefined when neither is set', async () => {
    process.env.INGEST_TOKEN = 'plain';
    forgetSecrets();
    expect(await secret('INGEST_TOKEN')).toBe('plain');
    delete process.env.INGEST_TOKEN;
    delete process.env.INGEST_TOKEN_ARN;
    forgetSecrets();
    expect(await secret('INGEST_TOKEN')).toBeUndefined();
  });
});
