// Dashboards (/dashboards, every role): the BI server's dashboard in an iframe through
// a cookieless embed session (components/admin/embed-session.ts). The service holds the
// session; the page renews its tokens before they expire, answers the frame's token
// requests, and acquires a new session when the old one ends. Which dashboard: the one the
// service is configured with (EMBED_DASHBOARD, GET /api/dashboard-embed/dashboard), shown
// directly; another BI address (…/embed/dashboards/7 or …/dashboards/7) can be picked into
// ?dashboard=. With none configured, the address form is the way in (the last one chosen in
// this browser is remembered) and the page names the setting; no session is opened until
// there is a dashboard to show. A 503 says which settings the service needs.
import { type FormEvent, useEffect, useMemo, useRef, useState } from 'react';
import { useSearchParams } from 'react-router';
import type { ApiProblem } from '../api/client';
import { type EmbedTokens, embedUrl, parseDashboard, useConfiguredDashboard, useEmbedSession } from '../components/admin/embed-session';
import { Loading, Problem } from '../components/states';
import { isoOf, utc, utcTime } from '../components/time';
import './dashboards.css';

const STORED = 'fleet-health.dashboard';

function readStored(): string {
  try {
    return localStorage.getItem(STORED) ?? '';
  } catch {
    return '';
  }
}

/** A moment of the embed session: its time of day, or with `date` its date too (UTC, as every time the console shows). */
function At({ ms, date = false }: { ms: number; date?: boolean }) {
  return <time dateTime={isoOf(ms)}>{date ? utc(ms) : utcTime(ms)}</time>;
}

export default function DashboardsPage() {
  const [params, setParams] = useSearchParams();
  const { configured, reload } = useConfiguredDashboard();
  const host = configured.status === 'ready' ? configured.host : undefined;
  const named = configured.status === 'ready' ? configured.dashboard : null;
  const picked = params.get('dashboard');
  // A pick in the address wins; then the service's dashboard; then, with none configured, the last pick here.
  const chosen = picked ?? named ?? (configured.status === 'ready' ? readStored() : '');
  const dashboard = useMemo(() => (chosen ? parseDashboard(chosen, host) : null), [chosen, host]);
  // A session only for a dashboard to show: with none chosen yet there is nothing to open one for.
  const { state: session, reacquire, fresh, onRenewed } = useEmbedSession(dashboard?.href ?? '', dashboard !== null);
  const state = configured.status === 'failed' ? ({ status: 'failed', error: configured.error } as const) : session;
  // Once the settings load, the session follows by itself: asking for both would open two.
  const retry = configured.status === 'failed' ? reload : reacquire;
  const frame = useRef<HTMLIFrameElement>(null);

  const choose = (value: string) => {
    if (!named) {
      try {
        localStorage.setItem(STORED, value);
      } catch {
        // Private mode: the URL still carries it.
      }
    }
    setParams(
      (p) => {
        const next = new URLSearchParams(p);
        next.set('dashboard', value);
        return next;
      },
      { preventScrollReset: true },
    );
  };
  const backToNamed = () =>
    setParams(
      (p) => {
        const next = new URLSearchParams(p);
        next.delete('dashboard');
        return next;
      },
      { preventScrollReset: true },
    );

  // The frame asks for tokens (session:tokens:request); renewed tokens are pushed to it.
  const origin = dashboard?.origin ?? null;
  useEffect(() => {
    if (!origin) return;
    const post = (t: EmbedTokens) =>
      frame.current?.contentWindow?.postMessage(
        JSON.stringify({
          type: 'session:tokens',
          api_token: t.api_token,
          api_token_ttl: Math.max(0, Math.round((t.apiExpires - Date.now()) / 1000)),
          navigation_token: t.navigation_token,
          navigation_token_ttl: Math.max(0, Math.round((t.navigationExpires - Date.now()) / 1000)),
          session_reference_token_ttl: Math.max(0, Math.round((t.sessionExpires - Date.now()) / 1000)),
        }),
        origin,
      );
    const onMessage = (event: MessageEvent) => {
      if (event.origin !== origin || event.source !== frame.current?.contentWindow) return;
      let data: unknown = event.data;
      if (typeof data === 'string') {
        try {
          data = JSON.parse(data);
        } catch {
          return;
        }
      }
      const type = (data as { type?: unknown } | null)?.type;
      if (type === 'session:tokens:request') void fresh().then((t) => t && post(t));
      else if (type === 'session:expired') reacquire();
    };
    window.addEventListener('message', onMessage);
    const off = onRenewed(post);
    return () => {
      window.removeEventListener('message', onMessage);
      off();
    };
  }, [origin, fresh, onRenewed, reacquire]);

  // The iframe's address changes only with a new session (a renewal must not reload it).
  const acquired = state.status === 'ready' ? state.acquired : null;
  const generation = state.status === 'ready' ? state.generation : -1;
  const src = useMemo(() => (dashboard && acquired ? embedUrl(dashboard, acquired, location.origin) : null), [dashboard, acquired]);

  return (
    <section className="dashboards-page" aria-labelledby="dashboards-title">
      <h1 id="dashboards-title">Dashboards</h1>
      {state.status === 'failed' ? (
        <NotAvailable error={state.error} retry={retry} />
      ) : (
        <>
          {named ? (
            <details className="dashboards-other" open={Boolean(picked)}>
              <summary>Show another dashboard</summary>
              <DashboardForm current={picked ?? ''} host={host} invalid={Boolean(picked) && !dashboard} onChoose={choose} />
              {picked && (
                <button type="button" className="link-button" onClick={backToNamed}>
                  Back to the configured dashboard
                </button>
              )}
            </details>
          ) : (
            configured.status === 'ready' && <DashboardForm current={chosen} host={host} invalid={Boolean(chosen) && !dashboard} onChoose={choose} />
          )}
          {configured.status === 'loading' ? (
            <Loading what="the dashboard settings" />
          ) : !dashboard ? (
            // An address that is not a dashboard is named by the form; with no address at all, where one comes from.
            !chosen && (
              <div className="state empty dashboards-none">
                The service names no dashboard: set <code>EMBED_DASHBOARD</code> to the dashboard's path on the BI server (for example{' '}
                <code>/embed/dashboards/7</code>; on AWS the stack's <code>embedDashboard</code>), or enter a dashboard's address above to show it here.
              </div>
            )
          ) : state.status === 'acquiring' ? (
            <Loading what="an embed session" />
          ) : (
            <>
              <p className="muted dashboards-session" role="status" aria-live="polite">
                Embed session until <At ms={state.tokens.sessionExpires} date /> · tokens renew automatically (next before{' '}
                <At ms={Math.min(state.tokens.apiExpires, state.tokens.navigationExpires)} />)
                {state.renewedAt ? (
                  <>
                    , last renewed <At ms={state.renewedAt} />
                  </>
                ) : (
                  ''
                )}
                .{' '}
                <button type="button" className="link-button" onClick={reacquire}>
                  Reload the dashboard
                </button>
              </p>
              {state.renewError && (
                <p className="error" role="alert">
                  Renewing the embed tokens failed ({state.renewError.detail}); trying again shortly.
                </p>
              )}
              {src && (
                <iframe
                  key={generation}
                  ref={frame}
                  className="dashboards-frame"
                  title="BI dashboard"
                  src={src}
                  sandbox="allow-scripts allow-same-origin allow-forms allow-popups allow-popups-to-escape-sandbox allow-downloads"
                  referrerPolicy="origin"
                />
              )}
            </>
          )}
        </>
      )}
    </section>
  );
}

function DashboardForm({ current, host, invalid, onChoose }: { current: string; host?: string; invalid: boolean; onChoose: (v: string) => void }) {
  const [text, setText] = useState(current);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => setText(current), [current]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!parseDashboard(text, host)) {
      setError(`Enter the address of a dashboard on the BI server (${host ?? 'https://…'}/…, or its path such as /embed/dashboards/7).`);
      return;
    }
    setError(null);
    onChoose(text.trim());
  };
  const message = error ?? (invalid ? `“${current}” is not a dashboard address on the BI server (${host ?? 'https://…'}, with the dashboard's path).` : null);
  return (
    <form className="toolbar dashboards-form" onSubmit={submit}>
      <label className="dashboards-address">
        Dashboard address
        <input
          type="text"
          inputMode="url"
          value={text}
          onChange={(e) => setText(e.target.value)}
          placeholder={`${host ?? 'https://bi.example.com'}/embed/dashboards/7`}
          aria-invalid={Boolean(message)}
          aria-describedby={message ? 'dashboard-address-error' : undefined}
        />
      </label>
      <button type="submit" className="primary">
        Show
      </button>
      {message && (
        <p id="dashboard-address-error" className="error dashboards-form-error" role="alert">
          {message}
        </p>
      )}
    </form>
  );
}

function NotAvailable({ error, retry }: { error: ApiProblem; retry: () => void }) {
  // Without Retry-After: not set up. With it, a passing refusal (throttling, a secret not read just now): the plain problem.
  // Not set up is a setting nobody made yet, not a failure: a neutral notice (the empty state's look, no alert role),
  // so it is neither shown in red nor announced as an error.
  if (error.status === 503 && error.retryAfter === undefined) {
    return (
      <div className="state empty dashboards-unconfigured">
        <strong>Dashboard embedding is not set up</strong>
        <p>{error.detail}</p>
        <p>
          These are settings of the service: in the environment of <code>npm start</code> locally, or on AWS the stack's <code>embedHost</code>,{' '}
          <code>embedClientId</code> and <code>embedDashboard</code> (the dashboard shown here) with the client secret in the secret the stack creates. The BI
          server's API client needs the cookieless-embed permission. Once set, reload this page.
        </p>
        {/* No "Try again": asked again, the service answers the same 503 until someone changes its settings. */}
      </div>
    );
  }
  return (
    <>
      {error.status === 502 && <p className="muted">The service reached the BI server, but it refused or failed to open an embed session.</p>}
      <Problem error={error} retry={retry} />
    </>
  );
}
