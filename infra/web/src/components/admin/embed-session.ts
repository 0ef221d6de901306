// A cookieless embed session for the dashboards page: acquired from the service
// (POST /api/dashboard-embed/acquire-session), its API and navigation tokens renewed
// through PUT /api/dashboard-embed/generate-tokens a minute before they expire, and
// acquired anew when the service says the session has ended (session_reference_token_ttl
// 0) or its lifetime runs out. Each acquire is a new "generation": the iframe is loaded
// again with its one-time authentication token; a renewal only hands the frame new tokens.
// Which dashboard the service names (EMBED_DASHBOARD) comes from GET /api/dashboard-embed/dashboard.
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiProblem, call, endpoint } from '../../api/client';

const acquireEp = endpoint<'dashboard-embed', 'acquireSession'>('POST', '/api/dashboard-embed/acquire-session');
const renewEp = endpoint<'dashboard-embed', 'generateTokens'>('PUT', '/api/dashboard-embed/generate-tokens');
const dashboardEp = endpoint<'dashboard-embed', 'dashboard'>('GET', '/api/dashboard-embed/dashboard');

export type ConfiguredDashboard =
  | { status: 'loading' }
  | { status: 'failed'; error: ApiProblem }
  /** `dashboard`: the configured dashboard's address, null when the service names none. */
  | { status: 'ready'; host: string; dashboard: string | null };

/** The BI server and the dashboard the service is configured to show; `reload` asks again (after a 503, once set). */
export function useConfiguredDashboard() {
  const [state, setState] = useState<ConfiguredDashboard>({ status: 'loading' });
  const [attempt, setAttempt] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: attempt is the trigger, not a value read.
  useEffect(() => {
    let cancelled = false;
    setState({ status: 'loading' });
    call(dashboardEp)
      .then((a) => !cancelled && setState({ status: 'ready', host: a.host, dashboard: a.dashboard_url }))
      .catch((e: unknown) => !cancelled && setState({ status: 'failed', error: asProblem(e) }));
    return () => {
      cancelled = true;
    };
  }, [attempt]);
  const reload = useCallback(() => setAttempt((a) => a + 1), []);
  return { configured: state, reload };
}

export interface EmbedTokens {
  authentication_token: string;
  api_token: string;
  navigation_token: string;
  /** Epoch ms. */
  apiExpires: number;
  navigationExpires: number;
  sessionExpires: number;
  /** TTLs as last answered (seconds), for the frame's token message. */
  api_token_ttl: number;
  navigation_token_ttl: number;
  session_reference_token_ttl: number;
}

export type EmbedState =
  | { status: 'acquiring' }
  | { status: 'failed'; error: ApiProblem }
  | {
      status: 'ready';
      /** The tokens as acquired (the iframe's address is made of these), and as last renewed. */
      acquired: EmbedTokens;
      tokens: EmbedTokens;
      generation: number;
      renewedAt: number | null;
      renewError: ApiProblem | null;
    };

const RENEW_BEFORE_MS = 60_000;
const MIN_DELAY_MS = 5_000;
/** setTimeout fires at once beyond 2^31-1 ms (24.8 days); a 30-day session is checked again after this. */
const MAX_DELAY_MS = 2_000_000_000;
const delayOf = (ms: number) => Math.min(MAX_DELAY_MS, Math.max(MIN_DELAY_MS, ms));

const asProblem = (e: unknown) => (e instanceof ApiProblem ? e : new ApiProblem(0, 'Error', e instanceof Error ? e.message : String(e)));

/** `enabled` false: no session yet (the page waits to know which dashboard it shows, so it acquires once). */
export function useEmbedSession(key: string, enabled = true) {
  const [state, setState] = useState<EmbedState>({ status: 'acquiring' });
  const [generation, setGeneration] = useState(0);
  const tokens = useRef<EmbedTokens | null>(null);
  const listeners = useRef(new Set<(t: EmbedTokens) => void>());
  const renewing = useRef<Promise<EmbedTokens | null> | null>(null);
  const [check, setCheck] = useState(0);

  /** Acquires a new session (a new iframe load). */
  const reacquire = useCallback(() => setGeneration((g) => g + 1), []);

  // Acquire on mount, when the dashboard changes and on every reacquire().
  // biome-ignore lint/correctness/useExhaustiveDependencies: key and generation are the triggers, not values read.
  useEffect(() => {
    let cancelled = false;
    tokens.current = null;
    setState({ status: 'acquiring' });
    if (!enabled) return;
    call(acquireEp)
      .then((a) => {
        if (cancelled) return;
        const now = Date.now();
        const t: EmbedTokens = {
          authentication_token: a.authentication_token,
          api_token: a.api_token,
          navigation_token: a.navigation_token,
          apiExpires: now + a.api_token_ttl * 1000,
          navigationExpires: now + a.navigation_token_ttl * 1000,
          sessionExpires: now + a.session_reference_token_ttl * 1000,
          api_token_ttl: a.api_token_ttl,
          navigation_token_ttl: a.navigation_token_ttl,
          session_reference_token_ttl: a.session_reference_token_ttl,
        };
        tokens.current = t;
        setState({ status: 'ready', acquired: t, tokens: t, generation, renewedAt: null, renewError: null });
      })
      .catch((e: unknown) => {
        if (!cancelled) setState({ status: 'failed', error: asProblem(e) });
      });
    return () => {
      cancelled = true;
    };
  }, [key, generation, enabled]);

  /** New API and navigation tokens; a session the service no longer has is acquired anew. */
  const renew = useCallback((): Promise<EmbedTokens | null> => {
    const current = tokens.current;
    if (!current) return Promise.resolve(null);
    renewing.current ??= call(renewEp, { body: { api_token: current.api_token, navigation_token: current.navigation_token } })
      .then((a) => {
        if (tokens.current !== current) return tokens.current;
        if (!('api_token' in a)) {
          reacquire();
          return null;
        }
        const now = Date.now();
        const t: EmbedTokens = {
          ...current,
          api_token: a.api_token,
          navigation_token: a.navigation_token,
          apiExpires: now + a.api_token_ttl * 1000,
          navigationExpires: now + a.navigation_token_ttl * 1000,
          sessionExpires: now + a.session_reference_token_ttl * 1000,
          api_token_ttl: a.api_token_ttl,
          navigation_token_ttl: a.navigation_token_ttl,
          session_reference_token_ttl: a.session_reference_token_ttl,
        };
        tokens.current = t;
        setState((s) => (s.status === 'ready' ? { ...s, tokens: t, renewedAt: now, renewError: null } : s));
        for (const l of listeners.current) l(t);
        return t;
      })
      .catch((e: unknown) => {
        setState((s) => (s.status === 'ready' ? { ...s, renewError: asProblem(e) } : s));
        return null;
      })
      .finally(() => {
        renewing.current = null;
      });
    return renewing.current;
  }, [reacquire]);

  // Renew a minute before the first token expires; acquire anew when the session ends.
  const ready = state.status === 'ready' ? state.tokens : null;
  const failedRenewal = state.status === 'ready' ? state.renewError : null;
  // biome-ignore lint/correctness/useExhaustiveDependencies: check re-arms the timers when a long session's wait ran out.
  useEffect(() => {
    if (!ready) return;
    const now = Date.now();
    const timers: ReturnType<typeof setTimeout>[] = [];
    const renewAt = Math.min(ready.apiExpires, ready.navigationExpires) - RENEW_BEFORE_MS;
    // After a failed renewal, try again in 30 s (the tokens may still be valid a while).
    const delay = failedRenewal ? 30_000 : delayOf(renewAt - now);
    if (ready.sessionExpires - now > delay) timers.push(setTimeout(() => void renew(), delay));
    const end = ready.sessionExpires - now;
    // Past the session's end: acquire anew; a session longer than setTimeout allows is looked at again later.
    timers.push(setTimeout(() => (Date.now() >= ready.sessionExpires - MIN_DELAY_MS ? reacquire() : setCheck((c) => c + 1)), delayOf(end)));
    return () => {
      for (const t of timers) clearTimeout(t);
    };
  }, [ready, failedRenewal, renew, reacquire, check]);

  /** The current tokens, renewed first when they expire within a minute (for the frame's token requests). */
  const fresh = useCallback(async () => {
    const t = tokens.current;
    if (!t) return null;
    return Math.min(t.apiExpires, t.navigationExpires) - Date.now() < RENEW_BEFORE_MS ? renew() : t;
  }, [renew]);

  const onRenewed = useCallback((listener: (t: EmbedTokens) => void) => {
    listeners.current.add(listener);
    return () => void listeners.current.delete(listener);
  }, []);

  return { state, reacquire, renew, fresh, onRenewed };
}

/**
 * The iframe address for a dashboard in a cookieless session: the BI server's
 * /login/embed/{target} with the one-time authentication token, the target being the
 * /embed/… page with the embed domain and the navigation token.
 */
export function embedUrl(dashboard: URL, tokens: EmbedTokens, embedDomain: string): string {
  const path = dashboard.pathname.startsWith('/embed/') ? dashboard.pathname : `/embed${dashboard.pathname}`;
  const params = new URLSearchParams(dashboard.search);
  params.set('embed_domain', embedDomain);
  params.set('sdk', '2');
  params.set('embed_navigation_token', tokens.navigation_token);
  const target = `${path}?${params}`;
  return `${dashboard.origin}/login/embed/${encodeURIComponent(target)}?embed_authentication_token=${encodeURIComponent(tokens.authentication_token)}`;
}

/**
 * A dashboard address the page can embed: a path on `host` (the BI server), or an absolute
 * http(s) address on that same origin. Never another origin, whatever the link says: the frame
 * is loaded with the session's one-time token and handed its API token. No host, no dashboard.
 */
export function parseDashboard(text: string, host: string | undefined): URL | null {
  if (!host) return null;
  try {
    const trimmed = text.trim();
    const url = trimmed.startsWith('/') && !trimmed.startsWith('//') ? new URL(`${host}${trimmed}`) : new URL(trimmed);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
    if (url.origin !== new URL(host).origin) return null;
    if (url.pathname === '/' || url.pathname === '') return null;
    return url;
  } catch {
    return null;
  }
}
