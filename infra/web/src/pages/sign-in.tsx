// Sign-in: username (an invitee's is their email) and password. Wrong credentials, the lockout (429 with
// Retry-After: the account's, or the network's) and an unreachable service are each said as such.
import { type FormEvent, useState } from 'react';
import { Navigate, useNavigate, useSearchParams } from 'react-router';
import { ApiProblem, call, endpoint } from '../api/client';
import { useSession } from '../session';
import { Button } from '../components/button';
import { useTabTitle } from '../components/tab-title';

const login = endpoint<'auth', 'login'>('POST', '/api/auth/login');

/**
 * Only a path of this console, never another origin: one '/' then no '/' or '\' (browsers read '/\host' as
 * '//host'), no '\' in the path (read as '/'), and no control character anywhere (URL parsing drops tabs and
 * newlines: '/<tab>/host'). A query or fragment may hold a '\': it stays theirs.
 */
export const safeNext = (next: string | null) => (next && /^\/(?![/\\])[^\\?#\p{Cc}]*(?:[?#][^\p{Cc}]*)?$/u.test(next) ? next : '/');

function describe(error: unknown): string {
  if (!(error instanceof ApiProblem)) return 'Sign-in failed.';
  if (error.status === 429) {
    const after = Number(error.headers?.get('Retry-After'));
    const wait = Number.isFinite(after) && after > 0 ? ` Try again in ${Math.ceil(after / 60)} minute${after > 60 ? 's' : ''}.` : '';
    // The service's `limit` says which: this username's lockout, or too many failed logins from the caller's network.
    if (error.body.limit === 'address') return `Too many failed sign-ins from your network: sign-in from it is paused for now.${wait}`;
    return `Too many attempts for this account: it is locked for now.${wait}`;
  }
  if (error.status === 401) return 'Wrong username or password.';
  return error.detail;
}

export default function SignIn() {
  const { user, signIn, notice } = useSession();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useTabTitle('Sign in');
  if (user) return <Navigate to={safeNext(params.get('next'))} replace />;

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      signIn(await call(login, { body: { username: String(form.get('username')), password: String(form.get('password')) } }));
      navigate(safeNext(params.get('next')), { replace: true });
    } catch (e) {
      setError(describe(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="auth-page" id="main">
      <form className="card auth-card" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Fleet Health</h1>
        <p className="muted">Sign in to watch the fleet.</p>
        {notice && (
          <p className="notice" role="status">
            {notice}
          </p>
        )}
        {/* Login takes a username only (shared/auth/sign-in.ts); an invited account's username is its email
            (shared/auth/user-admin.ts), which the bootstrap and directory accounts' are not: said, not "or email". */}
        <label>
          Username
          {/* biome-ignore lint/a11y/noAutofocus: the page is this one form; its first field is where everyone starts (a notice above is a live region, still read) */}
          <input name="username" autoComplete="username" required aria-describedby="sign-in-username-hint" autoFocus />
        </label>
        <p id="sign-in-username-hint" className="muted auth-field-hint">
          Invited by email? Your username is that email address.
        </p>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <Button type="submit" className="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </Button>
        <p className="muted auth-hint">
          Forgot your password? A superadmin resets it from People, and you get a link to choose a new one. (A directory (LDAP) password is reset in the
          directory.)
        </p>
      </form>
    </main>
  );
}
