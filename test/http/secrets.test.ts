// On AWS the JWT key and the ingest token come from Secrets Manager (the
// variables' _ARN twins). Tested with the real SDK client against a local
// server speaking the Secrets Manager JSON protocol.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { resetSigningKey, signAccessToken, verifyAccessToken } from '../../shared/auth/jwt.js';
import { forgetSecrets, SECRET_MAX_AGE_MS, secret } from '../../shared/config/secrets.js';
import { type FakeSecretsManager, startFakeSecretsManager } from '../support/fake-secrets-manager.js';

const SECRETS: Record<string, string> = {
  'arn:aws:secretsmanager:local:000000000000:secret:jwt-abc': 'k'.repeat(64),
  'arn:aws:secretsmanager:local:000000000000:secret:ingest-abc': 'ingest-token-from-secrets-manager',
};
let fake: FakeSecretsManager;

beforeAll(async () => {
  fake = await startFakeSecretsManager(SECRETS);
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_SECRETS_MANAGER: fake.endpoint,
    AWS_REGION: 'local',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  });
  delete process.env.JWT_SECRET;
  delete process.env.INGEST_TOKEN;
});

afterAll(async () => {
  await fake.close();
  delete process.env.JWT_SECRET_ARN;
  delete process.env.INGEST_TOKEN_ARN;
});

describe('secrets from Secrets Manager', () => {
  it('loads the JWT key on first use, not per request, and signs with it', async () => {
    process.env.JWT_SECRET_ARN = 'arn:aws:secretsmanager:local:000000000000:secret:jwt-abc';
    resetSigningKey();
    const token = await signAccessToken({ userId: 'u', username: 'u', name: 'U', email: 'u@example.com', role: 'viewer' });
    expect((await verifyAccessToken(token))?.principal.username).toBe('u');
    expect(fake.calls.filter((c) => c.endsWith('jwt-abc'))).toEqual(['secretsmanager.GetSecretValue arn:aws:secretsmanager:local:000000000000:secret:jwt-abc']);
  });

  it('loads the ingest token, and retries after a failure instead of caching it', async () => {
    process.env.INGEST_TOKEN_ARN = 'arn:aws:secretsmanager:local:000000000000:secret:ingest-abc';
    forgetSecrets();
    fake.failNext = true;
    // Named by its variable only: not the ARN, not the service's message.
    await expect(secret('INGEST_TOKEN')).rejects.toMatchObject({
      status: 503,
      message: 'INGEST_TOKEN could not be read from Secrets Manager; try again shortly.',
    });
    expect(await secret('INGEST_TOKEN')).toBe('ingest-token-from-secrets-manager');
    expect(await secret('INGEST_TOKEN')).toBe('ingest-token-from-secrets-manager');
    expect(fake.calls.filter((c) => c.endsWith('ingest-abc'))).toHaveLength(2);
  });

  it('reads a secret again in the background after a minute, so a rotated one takes over; a failed re-read keeps the value before', async () => {
    const arn = 'arn:aws:secretsmanager:local:000000000000:secret:ingest-rotated';
    SECRETS[arn] = 'ingest-token-before-rotation';
    process.env.INGEST_TOKEN_ARN = arn;
    forgetSecrets();
    vi.useFakeTimers({ toFake: ['Date'] });
    const reads = () => fake.calls.filter((c) => c.endsWith('ingest-rotated')).length;
    /** The value once the read a request started (in the background) has ended. */
    const settled = (expected: string) => vi.waitFor(async () => expect(await secret('INGEST_TOKEN')).toBe(expected), { timeout: 10_000 });
    try {
      expect(await secret('INGEST_TOKEN')).toBe('ingest-token-before-rotation');
      SECRETS[arn] = 'ingest-token-after-rotation';
      vi.setSystemTime(Date.now() + SECRET_MAX_AGE_MS - 1_000);
      expect(await secret('INGEST_TOKEN')).toBe('ingest-token-before-rotation');
      expect(reads()).toBe(1);
      vi.setSystemTime(Date.now() + 2_000);
      // This request is not kept waiting: it has the value held, and the read runs meanwhile.
      expect(await secret('INGEST_TOKEN')).toBe('ingest-token-before-rotation');
      await settled('ingest-token-after-rotation');
      expect(reads()).toBe(2);
      // Secrets Manager failing a re-read: the value read before stays, and is read again a minute later.
      fake.failNext = true;
      vi.setSystemTime(Date.now() + SECRET_MAX_AGE_MS + 1_000);
      expect(await secret('INGEST_TOKEN')).toBe('ingest-token-after-rotation');
      await vi.waitFor(() => expect(reads()).toBe(3), { timeout: 10_000 });
      expect(await secret('INGEST_TOKEN')).toBe('ingest-token-after-rotation');
      SECRETS[arn] = 'ingest-token-third';
      vi.setSystemTime(Date.now() + SECRET_MAX_AGE_MS + 1_000);
      await settled('ingest-token-third');
      expect(reads()).toBe(4);
    } finally {
      vi.useRealTimers();
      delete process.env.INGEST_TOKEN_ARN;
      forgetSecrets();
    }
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
