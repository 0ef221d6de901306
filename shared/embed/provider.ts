// Client for a BI server's cookieless-embed API (API 4.0 style, REFERENCE.md
// "Cookieless embed protocol"; DESIGN.md §10):
//   POST {host}/api/4.0/login                                  form client_id, client_secret → {access_token, expires_in}
//   POST {host}/api/4.0/embed/cookieless_session/acquire        embed user (+ session_reference_token) → tokens with _ttl
//   PUT  {host}/api/4.0/embed/cookieless_session/generate_tokens {session_reference_token, navigation_token, api_token}
// The caller (shared/embed/sessions.ts) stores the session reference token and
// maps errors to HTTP statuses.
//
// Configuration: shared/config/embed.ts.
//
// The login token is cached per container until shortly before it expires
// (it is a credential for the service, not per-user state). No automatic
// retries: acquiring a session is not idempotent. The one exception is a 401 on
// a *cached* login token (revoked or expired early): the request was refused,
// so we log in again and send it once more.
import * as z from '../zod.js';
import { embedSettings, notConfigured } from '../config/embed.js';
import type { Env } from '../config/env.js';
import { AnswerTooLarge, boundedText, failureReason, parseJson, timeoutBefore, tryAgainIn } from '../http/outbound.js';

export { DEFAULT_PERMISSIONS } from '../config/embed.js';
/** The longest session the protocol allows (30 days), and the one we ask for. */
export const SESSION_LENGTH_SECONDS = 2_592_000;
/** The most one answer of the BI server may hold: tokens and their lifetimes take a few KB. */
const EMBED_ANSWER_MAX_BYTES = 1024 * 1024;
/** A token the BI server hands out: a few hundred characters; longer is no token (and no item DynamoDB stores). */
const Token = z.string().check(z.minLength(1), z.maxLength(4096));
/** All the calls of one request to the BI server: inside the route's 29 s with room for the secret and DynamoDB. */
const REQUEST_BUDGET_MS = 24_000;
/** A cached login token is dropped this long before the server says it expires. */
const LOGIN_EXPIRY_MARGIN_SECONDS = 60;

/** The BI server and what the embed user may see (shared/config/embed.ts). */
export type EmbedConfig = Exclude<ReturnType<typeof embedSettings>, null>;

export interface EmbedUser {
  externalUserId: string;
  firstName: string;
  lastName: string;
}

export interface AcquireRequest {
  user: EmbedUser;
  /** The browser's User-Agent: the server ties the session to it. */
  userAgent: string;
  /** The origin the dashboards are embedded in, e.g. https://fleet.example.com */
  embedDomain: string;
  /** The stored reference token, to reuse the user's session. */
  sessionReferenceToken?: string;
}

/**
 * A lifetime the server answers, in seconds: nothing it hands out outlives the longest session
 * the protocol allows, so a longer one (a server's bug) is refused like an incomplete answer
 * rather than stored as a session that never ends.
 */
const Lifetime = z.int().check(z.nonnegative(), z.lte(SESSION_LENGTH_SECONDS));

export const AcquiredSession = z.lazy(() =>
  z.object({
    authentication_token: Token,
    authentication_token_ttl: Lifetime,
    navigation_token: Token,
    navigation_token_ttl: Lifetime,
    api_token: Token,
    api_token_ttl: Lifetime,
    session_reference_token: Token,
    session_reference_token_ttl: Lifetime.check(z.positive()),
  }),
);
export type AcquiredSession = z.infer<typeof AcquiredSession>;

export interface GenerateRequest {
  sessionReferenceToken: string;
  apiToken: string;
  navigationToken: string;
  userAgent: string;
}

/** New tokens, or `expired` when the server reports session_reference_token_ttl 0. */
export type GeneratedTokens =
  | { expired: false; api_token: string; api_token_ttl: number; navigation_token: string; navigation_token_ttl: number; session_reference_token_ttl: number }
  | { expired: true };

const Generated = z.lazy(() =>
  z.object({
    api_token: Token,
    api_token_ttl: Lifetime,
    navigation_token: Token,
    navigation_token_ttl: Lifetime,
    session_reference_token_ttl: Lifetime.check(z.positive()),
  }),
);
const Expired = z.lazy(() => z.object({ session_reference_token_ttl: z.literal(0) }));

const Login = z.lazy(() => z.object({ access_token: Token, expires_in: z.number().check(z.positive(), z.lte(SESSION_LENGTH_SECONDS)) }));

export interface EmbedProvider {
  acquire(request: AcquireRequest): Promise<AcquiredSession>;
  generateTokens(request: GenerateRequest): Promise<GeneratedTokens>;
}

/**
 * A provider call failed (HTTP error, bad answer, timeout, network): the message is safe to show (no credentials, no tokens, no body text).
 * `refusedRequest`: the server refused the request itself with a 4xx that says something about what we sent (not our
 * login, not 401/403 or a 429 rate limit) — the one failure that may mean a stored reference token is no longer known.
 */
export class EmbedProviderError extends Error {
  readonly refusedRequest: boolean;
  constructor(
    message: string,
    readonly status?: number,
    refusedRequest = false,
  ) {
    super(message);
    this.name = 'EmbedProviderError';
    this.refusedRequest = refusedRequest;
  }
}

/** The embed configuration; throws ServiceUnavailable (503) naming what is missing or malformed (never echoing values). `env`: another environment than this process's (tests). */
export function embedConfig(env?: Env): EmbedConfig {
  const settings = env ? embedSettings.from(env) : embedSettings();
  if (!settings) throw notConfigured();
  return settings;
}

/** The provider for the current environment (embedConfig's 503 when not configured). */
export function embedProvider(env?: Env): EmbedProvider {
  return embedClient(embedConfig(env));
}

// Login tokens per server and client id; a pending login is shared by concurrent calls.
const logins = new Map<string, { token: Promise<string>; expiresAt: number }>();

/** For tests: forget cached login tokens. */
export function forgetEmbedLogins(): void {
  logins.clear();
}

export function embedClient(config: EmbedConfig, budgetMs = REQUEST_BUDGET_MS): EmbedProvider {
  const cacheKey = `${config.host}\n${config.clientId}`;
  // One client serves one request, which may make several calls (a login, a retry after a 401, a
  // new session after a refused reference token): together they end inside the route's 29 s.
  const deadline = Date.now() + budgetMs;
  const timeoutMs = () => timeoutBefore(deadline, config.timeoutMs);

  const login = (): Promise<string> => {
    const cached = logins.get(cacheKey);
    if (cached && cached.expiresAt > Date.now()) return cached.token;
    const entry = { token: Promise.resolve(''), expiresAt: Number.POSITIVE_INFINITY };
    entry.token = (async () => {
      const form = new URLSearchParams({ client_id: config.clientId, client_secret: await config.clientSecret() });
      const answer = await call(
        'login',
        `${config.host}/api/4.0/login`,
        {
          method: 'POST',
          headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
          body: form.toString(),
        },
        timeoutMs(),
      );
      if (answer.status === 401 || answer.status === 403 || answer.status === 404) {
        // The API 4.0 login answers 404 for unknown credentials.
        throw new EmbedProviderError(`the dashboard embed server refused our API credentials (HTTP ${answer.status})`, answer.status);
      }
      if (answer.status === 429) throw rateLimited('login', answer.headers);
      if (answer.status < 200 || answer.status >= 300)
        throw new EmbedProviderError(`the dashboard embed server's login answered HTTP ${answer.status}`, answer.status);
      const parsed = Login.safeParse(parseJson(answer.text));
      if (!parsed.success)
        throw new EmbedProviderError("the dashboard embed server's login answer has no access token with a lifetime of at most 30 days", answer.status);
      const lifetime = Math.max(parsed.data.expires_in - LOGIN_EXPIRY_MARGIN_SECONDS, parsed.data.expires_in / 2);
      entry.expiresAt = Date.now() + lifetime * 1000;
      return parsed.data.access_token;
    })();
    logins.set(cacheKey, entry);
    entry.token.catch(() => {
      if (logins.get(cacheKey) === entry) logins.delete(cacheKey);
    });
    return entry.token;
  };

  /** Calls an authenticated endpoint; one fresh login and resend when a cached token is refused with 401. */
  const authenticated = async (what: string, path: string, method: 'POST' | 'PUT', body: unknown, userAgent: string) => {
    const send = async () => {
      const cached = logins.get(cacheKey);
      const fresh = !cached || cached.expiresAt <= Date.now();
      const token = await login();
      const answer = await call(
        what,
        `${config.host}${path}`,
        {
          method,
          headers: {
            Authorization: `token ${token}`,
            Accept: 'application/json',
            'Content-Type': 'application/json',
            'User-Agent': userAgent,
          },
          body: JSON.stringify(body),
        },
        timeoutMs(),
      );
      return { answer, fresh };
    };
    let { answer, fresh } = await send();
    if (answer.status === 401 && !fresh) {
      logins.delete(cacheKey);
      ({ answer } = await send());
    }
    if (answer.status === 429) throw rateLimited(what, answer.headers);
    if (answer.status < 200 || answer.status >= 300) {
      const refused = answer.status >= 400 && answer.status < 500 && ![401, 403].includes(answer.status);
      throw new EmbedProviderError(`the dashboard embed server's ${what} answered HTTP ${answer.status}`, answer.status, refused);
    }
    return answer;
  };

  return {
    async acquire(request) {
      const body = {
        session_length: SESSION_LENGTH_SECONDS,
        force_logout_login: true,
        external_user_id: request.user.externalUserId,
        first_name: request.user.firstName,
        last_name: request.user.lastName,
        permissions: config.permissions,
        models: config.models,
        group_ids: config.groupIds,
        ...(config.externalGroupId ? { external_group_id: config.externalGroupId } : {}),
        user_attributes: config.userAttributes,
        embed_domain: request.embedDomain,
        ...(request.sessionReferenceToken ? { session_reference_token: request.sessionReferenceToken } : {}),
      };
      const answer = await authenticated('session acquisition', '/api/4.0/embed/cookieless_session/acquire', 'POST', body, request.userAgent);
      const parsed = AcquiredSession.safeParse(parseJson(answer.text));
      if (!parsed.success) throw new EmbedProviderError("the dashboard embed server's session answer is incomplete", answer.status);
      return parsed.data;
    },

    async generateTokens(request) {
      const body = {
        session_reference_token: request.sessionReferenceToken,
        navigation_token: request.navigationToken,
        api_token: request.apiToken,
      };
      const answer = await authenticated('token generation', '/api/4.0/embed/cookieless_session/generate_tokens', 'PUT', body, request.userAgent);
      const json = parseJson(answer.text);
      if (Expired.safeParse(json).success) return { expired: true };
      const parsed = Generated.safeParse(json);
      if (!parsed.success) throw new EmbedProviderError("the dashboard embed server's token answer is incomplete", answer.status);
      const { api_token, api_token_ttl, navigation_token, navigation_token_ttl, session_reference_token_ttl } = parsed.data;
      return { expired: false, api_token, api_token_ttl, navigation_token, navigation_token_ttl, session_reference_token_ttl };
    },
  };
}

/**
 * One request, the whole answer read within the timeout. Redirects are not
 * followed: a request must not wander off with the credentials, and a 3xx
 * points at a wrong EMBED_HOST.
 */
async function call(
  what: string,
  url: string,
  init: { method: string; headers: Record<string, string>; body: string },
  timeoutMs: number,
): Promise<{ status: number; text: string; headers: Headers }> {
  try {
    const response = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    return { status: response.status, text: await boundedText(response, EMBED_ANSWER_MAX_BYTES), headers: response.headers };
  } catch (error) {
    if (error instanceof AnswerTooLarge) throw new EmbedProviderError(`the dashboard embed server answered the ${what} with ${error.message}`);
    throw new EmbedProviderError(`the dashboard embed server did not answer the ${what}: ${failureReason(error, timeoutMs)}`);
  }
}

/**
 * A 429: the BI server's rate limit, which says nothing about what we sent (not `refusedRequest`); the message gives
 * its Retry-After, so the user knows to wait rather than reload at once (it said only "answered HTTP 429").
 */
function rateLimited(what: string, headers: Headers): EmbedProviderError {
  return new EmbedProviderError(`the dashboard embed server is limiting the rate of requests (HTTP 429 to the ${what}): ${tryAgainIn(headers)}`, 429);
}
