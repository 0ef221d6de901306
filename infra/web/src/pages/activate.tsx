// The invitation link, /activate#token=…: the new user sets a password (at least
// 8 characters, said inline) and is signed in. The token rides in the fragment, which a
// browser never sends (no access log or Referer holds it), and leaves the address bar as
// the page reads it; `?token=`, as links sent before were written, is read the same way.
// So a reload after a failed try has no token: the page says so, and the mail's link works again; a
// newer link opened in the same tab (only the fragment changes: no reload) is read when it arrives.
// A password reset's link, /reset-password#token=…, is the same page in other words: the same
// route takes both tokens, and each says what it does.
import { type FormEvent, useEffect, useState } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { ApiProblem, call, endpoint } from '../api/client';
import { NewPasswordFields, newPasswordReady } from '../components/new-password';
import { useSession } from '../session';
import { Button } from '../components/button';
import { useTabTitle } from '../components/tab-title';

const activate = endpoint<'auth', 'activate'>('POST', '/api/auth/activate');

/** The token of the link this page was opened with: its fragment's, else its query's. */
function linkToken(): string {
  return new URLSearchParams(window.location.hash.slice(1)).get('token') ?? new URLSearchParams(window.location.search).get('token') ?? '';
}

/** The page's words: an invitation's, or a password reset's. */
const WORDS = {
  invitation: {
    title: 'Activate your account',
    missing: 'This link has no invitation token. Open the link from your invitation mail, or ask an admin for a new invitation.',
    lead: 'Choose a password to finish your invitation.',
    submit: 'Activate and sign in',
    busy: 'Activating…',
    failed: 'Activation failed.',
  },
  reset: {
    title: 'Choose a new password',
    missing: 'This link has no reset token. Open the link from your password reset mail, or ask a superadmin to reset your password again.',
    lead: 'Your password was reset. Choose a new one to sign in again.',
    submit: 'Set password and sign in',
    busy: 'Setting…',
    failed: 'The password was not set.',
  },
} as const;

export default function Activate() {
  const words = WORDS[useLocation().pathname === '/reset-password' ? 'reset' : 'invitation'];
  const [token, setToken] = useState(linkToken);
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    // Once read, the address bar (and the history entry, and what a screenshot shows) no longer holds it.
    const forget = () => {
      if (window.location.hash || window.location.search) window.history.replaceState(window.history.state, '', window.location.pathname);
    };
    // A newer link pasted into this tab changes only the fragment: no reload, so the page reads it here, and
    // the last link's failure no longer stands.
    const readNewLink = () => {
      const next = linkToken();
      if (next) {
        setToken(next);
        setError(null);
      }
      forget();
    };
    // Read, not only forgotten: a link that arrived between the first render and this effect (a busy machine) is the
    // one to use; forgetting it unread left the page saying the link had no token.
    readNewLink();
    window.addEventListener('hashchange', readNewLink);
    return () => window.removeEventListener('hashchange', readNewLink);
  }, []);
  useTabTitle(words.title);
  const { signIn } = useSession();
  const navigate = useNavigate();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!newPasswordReady(password, repeat)) return;
    setBusy(true);
    setError(null);
    try {
      signIn(await call(activate, { body: { token, password } }));
      navigate('/', { replace: true });
    } catch (e) {
      setError(e instanceof ApiProblem ? e.detail : words.failed);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="auth-page" id="main">
      <form className="card auth-card" onSubmit={submit} aria-labelledby="activate-title" noValidate>
        <h1 id="activate-title">{words.title}</h1>
        {!token ? (
          <p className="error" role="alert">
            {words.missing} <Link to="/sign-in">Sign in</Link>
          </p>
        ) : (
          <>
            <p className="muted">{words.lead}</p>
            <NewPasswordFields password={password} repeat={repeat} onPassword={setPassword} onRepeat={setRepeat} repeatLabel="Repeat it" />
            {error && (
              <p className="error" role="alert">
                {error}
              </p>
            )}
            <Button type="submit" className="primary" disabled={busy || !newPasswordReady(password, repeat)}>
              {busy ? words.busy : words.submit}
            </Button>
          </>
        )}
      </form>
    </main>
  );
}
