// Access tokens: HS256 JWTs signed and verified with jose, algorithm pinned,
// issuer/audience/expiry checked. The key comes from JWT_SECRET (local) or the
// Secrets Manager secret named by JWT_SECRET_ARN (AWS), read again once a minute (shared/config/secrets.ts).
import { randomUUID } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import { JOSEError } from 'jose/errors';
import * as z from '../zod.js';
import { Role } from './roles.js';
import { USERNAME_MAX } from './username.js';
import { JWT_SECRET_MIN_BYTES, tokenSettings } from '../config/tokens.js';
import { forgetSecrets, secret } from '../config/secrets.js';
import { ServiceUnavailable } from '../http/errors.js';
import type { Principal } from './principal.js';

export const ISSUER = 'fleet-health';
export const AUDIENCE = 'fleet-health-api';
const ALGORITHM = 'HS256';

/** The key as JWT_SECRET holds it now: secret() reads it again once a minute, so a rotated key takes over in warm containers too. */
async function key(): Promise<Uint8Array> {
  // A deployment's fault, not the caller's: 503 (and logged by the handler), tried again on the next request.
  const value = await secret('JWT_SECRET');
  if (!value) throw new ServiceUnavailable('The JWT signing key is missing: set JWT_SECRET or JWT_SECRET_ARN.');
  const key = new TextEncoder().encode(value);
  if (key.byteLength < JWT_SECRET_MIN_BYTES) throw new ServiceUnavailable(`The JWT signing key must be at least ${JWT_SECRET_MIN_BYTES} bytes.`);
  return key;
}

/** For tests that rotate JWT_SECRET. */
export function resetSigningKey(): void {
  forgetSecrets();
}

/**
 * The session a token belongs to: its `jti` (what a logout revokes, kept by every renewal) and
 * when its user signed in (`auth_time`, as OpenID Connect names it). A renewal signs a token of the
 * same session, so a session ends at sign-in + its longest life, renewed or not.
 */
export interface TokenSession {
  readonly id: string;
  /** Epoch seconds of the sign-in. */
  readonly authTime: number;
  /** How long the session may last, seconds: JWT_SESSION_MAX_SECONDS unless the caller says less (an LDAP account's). */
  readonly lastsSeconds?: number;
}

/** When `session` ends (epoch seconds): its sign-in + its longest life, as the settings are now. */
export function sessionEnd(session: TokenSession): number {
  const { JWT_SESSION_MAX_SECONDS } = tokenSettings();
  return session.authTime + Math.min(session.lastsSeconds ?? JWT_SESSION_MAX_SECONDS, JWT_SESSION_MAX_SECONDS);
}

/** When a token of `session` signed at `now` expires (epoch seconds): its lifetime, cut at the session's end. */
function sessionExpiry(session: TokenSession, now: number): number {
  return Math.min(now + tokenSettings().JWT_TTL_SECONDS, sessionEnd(session));
}

/**
 * `credential`: the account's password stamp (shared/auth/principal.ts's credentialStamp), when it has a password.
 * `session`: the session a renewal continues; none is a sign-in, which starts one.
 */
export async function signAccessToken(principal: Principal, credential?: string, session?: TokenSession): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const current = session ?? { id: randomUUID(), authTime: now };
  const claims = { username: principal.username, name: principal.name, email: principal.email, role: principal.role, auth_time: current.authTime };
  return new SignJWT(credential === undefined ? claims : { ...claims, cred: credential })
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .setSubject(principal.userId)
    .setJti(current.id)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(sessionExpiry(current, now))
    .sign(await key());
}

// Bounded as the tokens we sign are (ids are UUIDs): jti and username become DynamoDB keys, whose
// 2,048-byte limit a token signed with the key but not by us would otherwise turn into a 500.
const CLAIM_ID_MAX = 128;
/**
 * How far the clocks of the hosts that sign and verify may disagree (Lambda's agree to well within it): for iat and
 * auth_time only. Expiry gets none: jose's clockTolerance would have kept every token a minute past its exp.
 */
const CLOCK_SKEW_SECONDS = 60;
const Claims = z
  .object({
    sub: z.string().check(z.minLength(1), z.maxLength(CLAIM_ID_MAX)),
    username: z.string().check(z.maxLength(USERNAME_MAX)),
    name: z.string(),
    email: z.string(),
    role: Role,
    jti: z.string().check(z.minLength(1), z.maxLength(CLAIM_ID_MAX)),
    cred: z.optional(z.string().check(z.maxLength(CLAIM_ID_MAX))),
    // Absent from tokens signed before sessions were renewable: their sign-in is their iat.
    auth_time: z.optional(z.number()),
    iat: z.number(),
    exp: z.number(),
  })
  .check(
    // Issued now or before, and signed in before it was issued: a token from the future (or a sign-in after its token)
    // would outlive a "sign out everywhere" made before it, which tokens_valid_from compares with the sign-in.
    z.refine((c) => c.iat <= Date.now() / 1000 + CLOCK_SKEW_SECONDS && (c.auth_time === undefined || c.auth_time <= c.iat + CLOCK_SKEW_SECONDS)),
  );

export interface VerifiedToken {
  /** The caller as the token describes them; the account record has the last word. */
  principal: Principal;
  tokenId: string;
  /** The session's sign-in, epoch seconds (`auth_time`): compared with the account's tokens_valid_from. */
  authTime: number;
  expiresAt: number;
  /** The password stamp it was signed with, if any: compared with the account's now. */
  credential?: string;
}

/** Verify a token; returns null for anything invalid (bad signature, alg, expiry, claims). */
export async function verifyAccessToken(token: string): Promise<VerifiedToken | null> {
  try {
    const { payload } = await jwtVerify(token, await key(), { algorithms: [ALGORITHM], issuer: ISSUER, audience: AUDIENCE });
    const claims = Claims.safeParse(payload);
    if (!claims.success) return null;
    const { sub, username, name, email, role, jti, iat, exp, cred, auth_time } = claims.data;
    return {
      principal: { userId: sub, username, name, email, role },
      tokenId: jti,
      authTime: auth_time ?? iat,
      expiresAt: exp,
      ...(cred === undefined ? {} : { credential: cred }),
    };
  } catch (error) {
    if (error instanceof JOSEError) return null;
    throw error;
  }
}
