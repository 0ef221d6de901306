// Your account (/account, every role; the name in the top bar links here): who you are
// signed in as, and your password, changed with the current one (POST /api/auth/password,
// beyond the contract). The service ends every other session of yours and answers a new
// token, which replaces this tab's. An LDAP account's password is the directory's: the
// service says so (409) and the page shows it.
import { type FormEvent, useId, useState } from 'react';
import { ApiProblem, call, endpoint } from '../api/client';
import { NewPasswordFields, newPasswordReady } from '../components/new-password';
import { useSession } from '../session';
import './account.css';
import { Button } from '../components/button';

const changePassword = endpoint<'auth', 'changePassword'>('POST', '/api/auth/password');

export default function AccountPage() {
  const { user } = useSession();
  return (
    <section className="account-page" aria-labelledby="account-title">
      <h1 id="account-title">Your account</h1>
      <dl className="account-facts">
        <dt>Name</dt>
        <dd>{user?.name || '—'}</dd>
        <dt>Username</dt>
        <dd>{user?.username}</dd>
        <dt>Email</dt>
        <dd>{user?.email}</dd>
        <dt>Role</dt>
        <dd>{user?.role}</dd>
      </dl>
      <PasswordForm />
    </section>
  );
}

function PasswordForm() {
  const { user, signIn } = useSession();
  const id = useId();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!current || !newPasswordReady(next, repeat)) return;
    setBusy(true);
    setError(null);
    setDone(false);
    try {
      signIn(await call(changePassword, { body: { current_password: current, new_password: next } }));
      setCurrent('');
      setNext('');
      setRepeat('');
      setDone(true);
    } catch (e) {
      setError(e instanceof ApiProblem ? e.detail : 'The password was not changed.');
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card account-password" aria-labelledby={`${id}-t`}>
      <h2 id={`${id}-t`}>Change your password</h2>
      <p className="muted">Every other session of yours (other tabs, browsers, devices) ends; this one stays signed in.</p>
      <form onSubmit={submit} noValidate>
        {/* For password managers: whose password this is. */}
        <input type="text" autoComplete="username" value={user?.username ?? ''} readOnly hidden />
        <label>
          Current password
          <input type="password" autoComplete="current-password" value={current} onChange={(e) => setCurrent(e.target.value)} required />
        </label>
        <NewPasswordFields password={next} repeat={repeat} onPassword={setNext} onRepeat={setRepeat} repeatLabel="Repeat the new password" />
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        {done && (
          <p className="notice" role="status">
            Your password is changed, and your other sessions have ended.
          </p>
        )}
        <Button type="submit" className="primary" disabled={busy || !current || !newPasswordReady(next, repeat)}>
          {busy ? 'Changing…' : 'Change password'}
        </Button>
      </form>
    </section>
  );
}
