// The address an audit entry records behind CloudFront (shared/auth/caller.ts): the viewer's
// from X-Viewer-Address (CloudFront's function writes it) only beside the origin token the stack has CloudFront send;
// otherwise (no token, a wrong one, none configured, an address that is not one, the token
// unreadable) the TCP peer's. Through the auth Lambda's login on DynamoDB Local, the token from
// the variable (local) and from Secrets Manager (AWS) through a local server speaking its protocol.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as auth } from '../../functions/auth.js';
import { ORIGIN_VERIFY_HEADER, originTokenRetry, VIEWER_ADDRESS_HEADER } from '../../shared/auth/caller.js';
import { hashPassword } from '../../shared/auth/passwords.js';
import { ORIGIN_TOKEN_OVERLAP_MS } from '../../shared/config/edge.js';
import { resetSettings } from '../../shared/config/env.js';
import { listAudit } from '../../shared/db/audit.js';
import { createUser } from '../../shared/db/users.js';
import { useTestTables } from '../support/dynamo.js';
import { call, type Handler } from '../support/events.js';
import { type FakeSecretsManager, startFakeSecretsManager } from '../support/fake-secrets-manager.js';
import { useTestJwtSecret } from '../support/tokens.js';

const TOKEN = 'origin-token-0123456789abcdefghijklmnopqrstuvwxyzABCD';
const ARN = 'arn:aws:secretsmanager:local:000000000000:secret:origin-verify-abc';
const PASSWORD = 'a long enough password';
/** The TCP peer every test event comes from (test/support/events.ts): what CloudFront's edge would be. */
const PEER = '127.0.0.1';
let fake: FakeSecretsManager;

beforeAll(async () => {
  await useTestTables();
  useTestJwtSecret();
  await createUser({
    username: 'walker',
    name: 'Walker',
    email: 'walker@example.com',
    role: 'viewer',
    is_active: true,
    password_hash: await hashPassword(PASSWORD),
  });
  fake = await startFakeSecretsManager({ [ARN]: TOKEN });
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_SECRETS_MANAGER: fake.endpoint,
    AWS_REGION: 'local',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  });
});

afterAll(async () => {
  await fake.close();
  delete process.env.ORIGIN_VERIFY_TOKEN;
  delete process.env.ORIGIN_VERIFY_TOKEN_ARN;
  resetSettings();
});

/** The token as local runs set it, as the stack sets it (the secret's ARN), or not at all. */
function configure(how: 'variable' | 'secret' | 'none'): void {
  delete process.env.ORIGIN_VERIFY_TOKEN;
  delete process.env.ORIGIN_VERIFY_TOKEN_ARN;
  if (how === 'variable') process.env.ORIGIN_VERIFY_TOKEN = TOKEN;
  if (how === 'secret') process.env.ORIGIN_VERIFY_TOKEN_ARN = ARN;
  resetSettings(); // the secrets read, and a failed read remembered
}

/** Logs in with these headers and answers the address the login's audit entry recorded. */
async function auditedAddress(headers: Record<string, string>): Promise<string | null> {
  const walkers = async () => (await listAudit('login')).filter((e) => e.actor === 'walker').map((e) => JSON.stringify(e));
  const before = new Set(await walkers());
  const res = await call(auth as Handler, {
    method: 'POST',
    path: '/api/auth/login',
    routeKey: 'POST /api/auth/login',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ username: 'walker', password: PASSWORD }),
  });
  expect(res.statusCode).toBe(200);
  const added = (await walkers()).filter((e) => !before.has(e));
  expect(added).toHaveLength(1);
  return (JSON.parse(added[0]!) as { ip: string | null }).ip;
}

const viewer = (address: string, token = TOKEN) => ({ [ORIGIN_VERIFY_HEADER]: token, [VIEWER_ADDRESS_HEADER]: address });

describe('the audited address behind CloudFront', () => {
  it("is the viewer's, IPv4 or IPv6, when the request carries the origin token", async () => {
    configure('variable');
    expect(await auditedAddress(viewer('203.0.113.9'))).toBe('203.0.113.9');
    expect(await auditedAddress(viewer('2001:db8::7'))).toBe('2001:db8::7');
    // A direct invoke may spell the headers otherwise: read as API Gateway would deliver them, in lower case.
    expect(await auditedAddress({ 'X-Origin-Verify': TOKEN, 'X-Viewer-Address': '198.51.100.4' })).toBe('198.51.100.4');
  });

  it("is the peer's when the token is missing, wrong (also a prefix of it), or the address is not one", async () => {
    configure('variable');
    expect(await auditedAddress({ [VIEWER_ADDRESS_HEADER]: '203.0.113.9' })).toBe(PEER);
    expect(await auditedAddress(viewer('203.0.113.9', 'guessed'))).toBe(PEER);
    expect(await auditedAddress(viewer('203.0.113.9', TOKEN.slice(0, -1)))).toBe(PEER);
    expect(await auditedAddress(viewer('evil.example'))).toBe(PEER);
    expect(await auditedAddress(viewer('203.0.113.9:51234'))).toBe(PEER);
  });

  it("is the peer's when no token is configured (local runs have no CDN), whatever the caller sends", async () => {
    configure('none');
    expect(await auditedAddress(viewer('203.0.113.9'))).toBe(PEER);
  });

  it('takes the token from Secrets Manager on AWS, read once; unreadable, logins still work and record the peer until it is tried again', async () => {
    configure('secret');
    const reads = () => fake.calls.filter((c) => c.endsWith('origin-verify-abc')).length;
    fake.failNext = true;
    expect(await auditedAddress(viewer('198.51.100.4'))).toBe(PEER);
    // Within the retry interval nobody waits on Secrets Manager again.
    expect(await auditedAddress(viewer('198.51.100.4'))).toBe(PEER);
    expect(reads()).toBe(1);
    const interval = originTokenRetry.afterMs;
    originTokenRetry.afterMs = 0;
    try {
      expect(await auditedAddress(viewer('198.51.100.4'))).toBe('198.51.100.4');
      expect(await auditedAddress(viewer('198.51.100.5'))).toBe('198.51.100.5');
    } finally {
      originTokenRetry.afterMs = interval;
    }
    expect(reads()).toBe(2);
  });

  it("takes the token before a rotation as CloudFront's for an hour after it (until the deploy reaches every edge), then no more", async () => {
    const NEW = 'origin-token-rotated-0123456789abcdefghijklmnopqrstuvwxyz';
    const rotatedAt = (msAgo: number) => ({
      AWSCURRENT: { value: NEW, created: (Date.now() - msAgo) / 1000 },
      AWSPREVIOUS: { value: TOKEN, created: 1.7e9 },
    });
    const rotated = await startFakeSecretsManager({ [ARN]: rotatedAt(5 * 60_000) });
    process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = rotated.endpoint;
    try {
      configure('secret');
      expect(await auditedAddress(viewer('198.51.100.6', NEW))).toBe('198.51.100.6');
      expect(await auditedAddress(viewer('198.51.100.7', TOKEN))).toBe('198.51.100.7'); // CloudFront, not yet deployed
      expect(await auditedAddress(viewer('198.51.100.8', 'guessed'))).toBe(PEER);
      // The previous token was read once, for the first token that was not the current one.
      expect(rotated.calls.filter((c) => c.endsWith('AWSPREVIOUS'))).toHaveLength(1);
      // Rotated more than an hour ago: the token before it is no one's.
      const older = await startFakeSecretsManager({ [ARN]: rotatedAt(ORIGIN_TOKEN_OVERLAP_MS + 60_000) });
      process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = older.endpoint;
      try {
        configure('secret');
        expect(await auditedAddress(viewer('198.51.100.9', TOKEN))).toBe(PEER);
        expect(await auditedAddress(viewer('198.51.100.9', NEW))).toBe('198.51.100.9');
      } finally {
        await older.close();
      }
    } finally {
      await rotated.close();
      process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = fake.endpoint;
      configure('none');
    }
  });
});
