import * as z from '../zod.js';
import { ANY_ROLE, ROLES } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '../auth/password-rule.js';

export const HealthCheckResponse = z.lazy(() => z.object({ status: z.literal('ok'), service: z.string() }));

/** Spec §2 User (UserInfo). */
export const UserInfo = z.lazy(() => z.object({ id: z.string(), username: z.string(), name: z.string(), email: z.string(), role: z.enum(ROLES) }));
export type UserInfo = z.infer<typeof UserInfo>;

/** Spec §2 LoginResponse: login and activation (auto-login) answer it. */
export const LoginResponse = z.lazy(() => z.object({ access_token: z.string(), token_type: z.literal('bearer'), user: UserInfo }));
export type LoginResponse = z.infer<typeof LoginResponse>;

export const LogoutResponse = z.lazy(() => z.object({ ok: z.literal(true) }));

/** The OpenAPI document itself: an object whose shape is OpenAPI 3.1's. */
export const OpenApiResponse = z.lazy(() =>
  z.looseObject({
    openapi: z.string(),
    info: z.looseObject({ title: z.string(), version: z.string() }),
    paths: z.record(z.string(), z.unknown()),
  }),
);

export const LoginBody = z.lazy(() =>
  z.strictObject({
    username: z.string().check(z.trim(), z.minLength(1), z.maxLength(256)),
    password: z.string().check(z.minLength(1), z.maxLength(PASSWORD_MAX)),
  }),
);

/** A password someone chooses (shared/auth/password-rule.ts). */
const NewPassword = () => z.string().check(z.minLength(PASSWORD_MIN, `must be at least ${PASSWORD_MIN} characters`), z.maxLength(PASSWORD_MAX));

export const ActivateBody = z.lazy(() =>
  z.strictObject({
    token: z.string().check(z.minLength(1), z.maxLength(512)),
    password: NewPassword(),
  }),
);

/** Beyond the contract: one's own password, changed with the current one (other sessions end). */
export const ChangePasswordBody = z.lazy(() =>
  z.strictObject({
    current_password: z.string().check(z.minLength(1), z.maxLength(PASSWORD_MAX)),
    new_password: NewPassword(),
  }),
);

export const authGroup = defineGroup({
  name: 'auth',
  config: ['ldap', 'edge'],
  tables: { users: 'readwrite', audit: 'append' },
  routes: {
    healthCheck: {
      method: 'GET',
      path: '/api/health-check',
      summary: 'Liveness check',
      auth: 'public',
      roles: [],
      response: HealthCheckResponse,
    },
    openapi: { method: 'GET', path: '/api/openapi.json', summary: 'This API as an OpenAPI 3.1 document', auth: 'public', roles: [], response: OpenApiResponse },
    login: {
      method: 'POST',
      path: '/api/auth/login',
      summary: 'Log in, receive a bearer token',
      auth: 'public',
      roles: [],
      body: LoginBody,
      problems: [401, 403, 409, 429],
      response: LoginResponse,
    },
    activate: {
      method: 'POST',
      path: '/api/auth/activate',
      summary: 'Take an invitation or password-reset link: set the password and log in',
      auth: 'public',
      roles: [],
      body: ActivateBody,
      problems: [400],
      response: LoginResponse,
    },
    changePassword: {
      method: 'POST',
      path: '/api/auth/password',
      summary: 'Change your own password; every other session ends, and the answer signs you in again',
      auth: 'user',
      roles: ANY_ROLE,
      body: ChangePasswordBody,
      problems: [400, 409, 429],
      response: LoginResponse,
    },
    logout: {
      method: 'POST',
      path: '/api/auth/logout',
      summary: 'Log out (audited with X-Session-Duration)',
      auth: 'user',
      roles: ANY_ROLE,
      // Seconds the session lasted, as the console counted them; a value that is no such number is audited as null.
      headers: z.lazy(() => z.object({ 'x-session-duration': z.optional(z.string()) })),
      response: LogoutResponse,
    },
    renew: {
      method: 'POST',
      path: '/api/auth/renew',
      summary: "A fresh token for your session, as the console asks halfway through a token's life; never past JWT_SESSION_MAX_SECONDS after sign-in",
      auth: 'user',
      roles: ANY_ROLE,
      response: LoginResponse,
    },
    me: { method: 'GET', path: '/api/auth/me', summary: 'The current user', auth: 'user', roles: ANY_ROLE, response: UserInfo },
    // API Gateway sends every other /api/... request here, so an unknown path
    // gets a problem+json 404 and a CORS preflight gets its answer.
    fallback: { method: 'ANY', path: '/api/{proxy+}', summary: 'Unmatched API paths (404) and CORS preflight', auth: 'public', roles: [], problems: [404] },
  },
});
