// Access tokens: their lifetime and signing key. The key is the JWT_SECRET secret
// (shared/config/secrets.ts): its value locally, checked here so a short one stops
// `npm start` instead of failing every login; on AWS the value of the secret
// JWT_SECRET_ARN names is checked when shared/auth/jwt.ts reads it. Every route
// group verifies tokens.
import * as z from '../zod.js';
import { defineSettings, whole } from './env.js';

/** HS256 wants a key at least as long as its hash (RFC 7518 §3.2). */
export const JWT_SECRET_MIN_BYTES = 32;
/** A session's longest life by default (JWT_SESSION_MAX_SECONDS), and the most it may be set to. */
const SESSION_MAX_DEFAULT = 30 * 86_400;
export const SESSION_MAX_LIMIT = 365 * 86_400;
/** The most JWT_TTL_SECONDS may be set to: no token lives longer than this past its signing. */
export const TOKEN_TTL_LIMIT = 30 * 86_400;
const SECRET_MESSAGE = `JWT_SECRET must be at least ${JWT_SECRET_MIN_BYTES} bytes`;

export const tokenSettings = defineSettings(
  'tokens',
  () => ({
    JWT_TTL_SECONDS: whole('JWT_TTL_SECONDS', 43_200, 60, TOKEN_TTL_LIMIT, ' of seconds'),
    // How long a session lasts at most, renewed or not (POST /api/auth/renew): Grafana's
    // login_maximum_lifetime_duration, 30 days by default as there. A token never outlives it.
    JWT_SESSION_MAX_SECONDS: whole('JWT_SESSION_MAX_SECONDS', SESSION_MAX_DEFAULT, 60, SESSION_MAX_LIMIT, ' of seconds'),
    JWT_SECRET: z.optional(z.string().check(z.refine((value) => Buffer.byteLength(value, 'utf8') >= JWT_SECRET_MIN_BYTES, { error: SECRET_MESSAGE }))),
    JWT_SECRET_ARN: z.optional(z.string()),
  }),
  // The key itself stays out of the settings: shared/auth/jwt.ts reads it through secret() as on AWS.
  { secrets: ['JWT_SECRET'], derive: (v) => ({ JWT_TTL_SECONDS: v.JWT_TTL_SECONDS, JWT_SESSION_MAX_SECONDS: v.JWT_SESSION_MAX_SECONDS }) },
);
