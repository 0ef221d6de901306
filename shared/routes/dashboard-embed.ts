import * as z from '../zod.js';
import { ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';

export const GenerateTokensBody = z.lazy(() =>
  z.strictObject({
    api_token: z.string().check(z.minLength(1), z.maxLength(4096)),
    navigation_token: z.string().check(z.minLength(1), z.maxLength(4096)),
  }),
);

const Ttl = z.int().check(z.nonnegative());

/**
 * The caller's User-Agent, which the BI server ties the session to and so is sent on: one HTTP cannot carry (a
 * character past U+00FF, a line break) is refused here, where sending it failed before anything left and read as
 * "the embed server did not answer".
 */
const UserAgent = () =>
  z.optional(z.string().check(z.regex(/^[^\0\r\n\u0100-\uffff]*$/, { error: 'must hold only characters HTTP can carry (none past U+00FF, no line break)' })));

/** spec §2 Dashboard-embed tokens; the session reference token itself is never returned. */
export const EmbedSessionAnswer = z.lazy(() =>
  z.strictObject({
    authentication_token: z.string().check(z.minLength(1)),
    authentication_token_ttl: Ttl,
    navigation_token: z.string().check(z.minLength(1)),
    navigation_token_ttl: Ttl,
    api_token: z.string().check(z.minLength(1)),
    api_token_ttl: Ttl,
    session_reference_token_ttl: Ttl,
  }),
);

/** New tokens, or only `session_reference_token_ttl: 0` when the session has expired (acquire a new one). */
export const EmbedTokensAnswer = z.lazy(() =>
  z.union([
    z.strictObject({
      api_token: z.string().check(z.minLength(1)),
      api_token_ttl: Ttl,
      navigation_token: z.string().check(z.minLength(1)),
      navigation_token_ttl: Ttl,
      session_reference_token_ttl: z.int().check(z.positive()),
    }),
    z.strictObject({ session_reference_token_ttl: z.literal(0) }),
  ]),
);

/** Issue 19 §8: the BI server and the dashboard the console shows (EMBED_DASHBOARD), null when none is configured. */
export const EmbedDashboardAnswer = z.lazy(() =>
  z.strictObject({
    host: z.url(),
    dashboard_url: z.nullable(z.url()),
  }),
);

export const dashboardEmbedGroup = defineGroup({
  name: 'dashboard-embed',
  config: ['embed', 'links'],
  tables: { users: 'read', 'embed-sessions': 'readwrite' },
  routes: {
    acquireSession: {
      method: 'POST',
      path: '/api/dashboard-embed/acquire-session',
      summary: 'Acquire a cookieless embed session',
      auth: 'user',
      roles: ANY_ROLE,
      // The page that will embed the dashboard; in production it must be one of CORS_ORIGINS (shared/embed/sessions.ts).
      headers: z.lazy(() => z.object({ origin: z.optional(z.string()), 'user-agent': UserAgent() })),
      response: EmbedSessionAnswer,
      // 400: no valid Origin header; 403: an origin that may not embed (shared/embed/sessions.ts).
      problems: [400, 403, 502, 503],
    },
    dashboard: {
      method: 'GET',
      path: '/api/dashboard-embed/dashboard',
      summary: 'The BI server and the configured dashboard to embed',
      auth: 'user',
      roles: ANY_ROLE,
      response: EmbedDashboardAnswer,
      problems: [503],
    },
    generateTokens: {
      method: 'PUT',
      path: '/api/dashboard-embed/generate-tokens',
      summary: 'Refresh embed API and navigation tokens',
      auth: 'user',
      roles: ANY_ROLE,
      headers: z.lazy(() => z.object({ 'user-agent': UserAgent() })),
      body: GenerateTokensBody,
      response: EmbedTokensAnswer,
      problems: [502, 503],
    },
  },
});
