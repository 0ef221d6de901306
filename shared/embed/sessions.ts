// Cookieless dashboard-embed sessions (spec §4 Dashboard embed, §7, §8; DESIGN.md §10):
// acquire a session for the caller on the BI server, keep its session
// reference token server-side (embed-sessions, one per user), and trade the
// browser's expiring api/navigation tokens for new ones.
//
// The reference token never leaves this module towards the browser and is
// never logged. Errors: not configured → 503 (embedConfig), missing or
// malformed Origin → 400, an origin outside CORS_ORIGINS in production → 403,
// the BI server failing (login, acquire, generate: 4xx/5xx/timeout/garbage) → 502
// with a detail that carries no credential, token or answer text.
//
// Two acquires of the same user (two tabs) may race and start two sessions: the
// one stored second is not stored, and its acquire joins the stored session
// instead, so both tabs renew against the reference token kept here. After two
// such joins (a third tab racing each time) the third try stores its own session
// over whatever is there, and a tab of the one replaced must acquire again.
import { coreSettings } from '../config/core.js';
import { linkSettings } from '../config/links.js';
import type { Env } from '../config/env.js';
import { deleteEmbedSession, getEmbedSession, putEmbedSession } from '../db/embed-sessions.js';
import { BadGateway, BadRequest, Forbidden } from '../http/errors.js';
import type { Principal } from '../auth/principal.js';
import { createLogger } from '../log.js';
import { EmbedProviderError, embedConfig, embedProvider, type EmbedProvider, type EmbedUser } from './provider.js';

const log = createLogger('dashboard-embed');

export interface EmbedTokens {
  authentication_token: string;
  authentication_token_ttl: number;
  navigation_token: string;
  navigation_token_ttl: number;
  api_token: string;
  api_token_ttl: number;
  session_reference_token_ttl: number;
}

export type RefreshedTokens =
  | { api_token: string; api_token_ttl: number; navigation_token: string; navigation_token_ttl: number; session_reference_token_ttl: number }
  | { session_reference_token_ttl: 0 };

export interface AcquireInput {
  principal: Principal;
  /** The request's Origin header: the embed domain. */
  origin: string | undefined;
  userAgent: string;
}

export interface GenerateInput {
  principal: Principal;
  userAgent: string;
  apiToken: string;
  navigationToken: string;
}

/** The BI server's user for one of ours: a stable external id and the name split in two. */
export function embedUser(principal: Principal): EmbedUser {
  const words = principal.name.trim().split(/\s+/).filter(Boolean);
  const [first = principal.username, ...rest] = words;
  return { externalUserId: `fleet-health-${principal.userId}`, firstName: first, lastName: rest.join(' ') };
}

/**
 * The embed domain for an Origin header value: a bare http(s) origin, and in
 * production the console's own (APP_URL) or one of CORS_ORIGINS. Missing → 400 (an
 * embed session is bound to a domain; we do not guess one), not allowed → 403.
 */
export function embedDomain(origin: string | undefined): string {
  const value = origin?.trim();
  if (!value || value === 'null') throw new BadRequest('The Origin header is required: the embed session is bound to the origin that embeds the dashboards.');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new BadRequest('The Origin header is not a valid origin.');
  }
  // An origin is scheme://host[:port] and nothing more.
  const bare = url.origin.toLowerCase() === value.replace(/\/$/, '').toLowerCase();
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !bare) {
    throw new BadRequest('The Origin header is not a valid origin.');
  }
  // The console's own origin (APP_URL: on AWS the CloudFront URL unless set) always may: browsers send Origin on
  // same-origin POSTs too, and the console is served same-origin, so CORS_ORIGINS leaves it out.
  if (coreSettings().stage === 'prod' && !coreSettings().corsOrigins.includes(url.origin) && url.origin !== new URL(linkSettings().appUrl).origin) {
    throw new Forbidden('Dashboards may not be embedded from this origin.');
  }
  return url.origin;
}

export async function acquireEmbedSession(input: AcquireInput, provider: () => EmbedProvider = embedProvider): Promise<EmbedTokens> {
  // Not configured is said first (503), as generate-tokens says it: no Origin could make the request work.
  const client = provider(); // 503 when not configured
  const domain = embedDomain(input.origin);
  const userId = input.principal.userId;
  const acquire = (sessionReferenceToken: string | undefined) =>
    client.acquire({ user: embedUser(input.principal), userAgent: input.userAgent, embedDomain: domain, sessionReferenceToken });
  let stored = await getEmbedSession(userId);
  for (let attempt = 1; ; attempt++) {
    const read = stored;
    const session = await viaProvider(async () => {
      try {
        return await acquire(read?.sessionReferenceToken);
      } catch (error) {
        // The BI server refused the acquire itself (a 4xx about what we sent): the stored reference token
        // may be unknown to it, so forget it and start a new session instead of failing every acquire until
        // its TTL runs out. A refused login, a 401/403 or a 429 says nothing about the token: it is kept.
        if (!read || !(error instanceof EmbedProviderError) || !error.refusedRequest) throw error;
        await deleteEmbedSession(userId, read.sessionReferenceToken);
        return acquire(undefined);
      }
    });
    // Another tab's acquire stored a session of its own since `read`: this tab joins that one (iframes share
    // a session through its reference token), else its renewals would meet the other's token. The last try
    // stores its own whatever is there, as the later write.
    const replacing = attempt === JOIN_ATTEMPTS ? 'any' : read?.sessionReferenceToken;
    if (await putEmbedSession(userId, session.session_reference_token, session.session_reference_token_ttl, replacing)) {
      log.info('embed session acquired', {
        user_id: userId,
        reused: read?.sessionReferenceToken === session.session_reference_token,
        joined_another_acquire: attempt > 1,
        session_reference_token_ttl: session.session_reference_token_ttl,
      });
      return tokensOf(session);
    }
    stored = await getEmbedSession(userId);
  }
}

/** Acquires of one request: its own, then at most two to join sessions other tabs stored meanwhile. */
const JOIN_ATTEMPTS = 3;

function tokensOf(session: EmbedTokens): EmbedTokens {
  return {
    authentication_token: session.authentication_token,
    authentication_token_ttl: session.authentication_token_ttl,
    navigation_token: session.navigation_token,
    navigation_token_ttl: session.navigation_token_ttl,
    api_token: session.api_token,
    api_token_ttl: session.api_token_ttl,
    session_reference_token_ttl: session.session_reference_token_ttl,
  };
}

export async function generateEmbedTokens(input: GenerateInput, provider: () => EmbedProvider = embedProvider): Promise<RefreshedTokens> {
  const client = provider(); // 503 when not configured
  const userId = input.principal.userId;
  const stored = await getEmbedSession(userId);
  if (!stored) return { session_reference_token_ttl: 0 };
  const tokens = await viaProvider(async () => {
    try {
      return await client.generateTokens({
        sessionReferenceToken: stored.sessionReferenceToken,
        apiToken: input.apiToken,
        navigationToken: input.navigationToken,
        userAgent: input.userAgent,
      });
    } catch (error) {
      // The BI server refused the tokens we sent (a 4xx about the request: tokens of a session it no longer
      // knows, or of another browser): sending them again is refused again, so the tab is told to acquire
      // anew, which reuses the stored session or, if that is refused too, starts one. A 401/403/429 or a
      // failure says nothing about the tokens: a 502, and the tab tries again later.
      if (!(error instanceof EmbedProviderError) || !error.refusedRequest) throw error;
      log.info('embed tokens refused; the tab acquires anew', { user_id: userId, status: error.status });
      return 'refused' as const;
    }
  });
  // The stored session is kept for the acquire to reuse (if the server no longer knows it, the acquire starts one).
  if (tokens === 'refused') return { session_reference_token_ttl: 0 };
  if (tokens.expired) {
    await deleteEmbedSession(userId, stored.sessionReferenceToken);
    log.info('embed session expired', { user_id: userId });
    return { session_reference_token_ttl: 0 };
  }
  return {
    api_token: tokens.api_token,
    api_token_ttl: tokens.api_token_ttl,
    navigation_token: tokens.navigation_token,
    navigation_token_ttl: tokens.navigation_token_ttl,
    session_reference_token_ttl: tokens.session_reference_token_ttl,
  };
}

async function viaProvider<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof EmbedProviderError) throw new BadGateway(`Dashboard embedding failed: ${error.message}.`);
    throw error;
  }
}

/** The BI server and the dashboard the console shows: EMBED_DASHBOARD on EMBED_HOST, or null when none is set (503 when embedding is not configured). */
export function configuredDashboard(env?: Env): { host: string; dashboard_url: string | null } {
  const { host, dashboard } = embedConfig(env);
  return { host, dashboard_url: dashboard ? `${host}${dashboard}` : null };
}
