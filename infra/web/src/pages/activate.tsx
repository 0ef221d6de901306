// The invitation link, /activate#token=…: the new user sets a password (at least
// 8 characters, said inline) and is signed in. The token rides in the fragment, which a
// browser never sends (no access log or Referer holds it), and leaves the address bar as
// the page reads it; `?token=`, as links sent before were written, is read the same way.
// So a reload after a failed try has no token: the page says so, and the mail's link works again.
import { type FormEvent, useEffect, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { ApiProblem, call, endpoint } from '../api/client';
import { NewPasswordFields, newPasswordReady } from '../components/new-password';
import { useSession } from '../session';

const activate = endpoint<'auth', 'activate'>('POST', '/api/auth/activate');

/** The token of the link this page was opened with: its fragment's, else its query's. */
function linkToken(): string {
  return new URLSearchParams(window.location.hash.slice(1)).get('token') ?? new URLSearchParams(window.location.search).get('token') ?? '';
}

export default function Activate() {
  const [token] = useState(linkToken);
  useEffect(() => {
    // Read once: the address bar (and the history entry, and what a screenshot shows) no longer holds it.
    if (window.location.hash || window.location.search) window.history.replaceState(window.history.state, '', window.location.pathname);
  }, []);
  const { signIn } = useSession();
  const navigate = useNavigate();
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!newPasswordReady(password, repeat)) return;
    setBusy(true);
    setError(null);
    try {
      signIn(await call(activate, { body: { token, password } }));
      navigate('/', { replace: true });
    } catch (e) {
      setError(e instanceof ApiProblem ? e.detail : 'Activation failed.');
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="auth-page" id="main">
      <form className="card auth-card" onSubmit={submit} aria-labelledby="activate-title" noValidate>
        <h1 id="activate-title">Activate your account</h1>
        {!token ? (
          <p className="error" role="alert">
            This link has no invitation token. Open the link from your invitation mail, or ask an admin for a new invitation. <Link to="/sign-in">Sign in</Link>
          </p>
        ) : (
          <>
            <p className="muted">Choose a password to finish your invitation.</p>
            <NewPasswordFields password={password} repeat={repeat} onPassword={setPassword} onRepeat={setRepeat} repeatLabel="Repeat it" />
            {error && (
              <p className="error" role="alert">
                {error}
              </p>
            )}
            <button type="submit" className="primary" disabled={busy || !newPasswordReady(password, repeat)}>
              {busy ? 'Activating…' : 'Activate and sign in'}
            </button>
          </>
        )}
      </form>
    </main>
  );
}
