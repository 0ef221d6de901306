// A new password and its repeat, with the service's length rule said inline as it is typed:
// the invitation's activation and "Your account" ask for one the same way.
import { count } from './format';

/** The service's rule (activation and POST /api/auth/password): 8 to 1,024 characters; shared/auth/password-rule.ts holds it (the console imports types only). */
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 1024;

/** Whether the two fields hold a password the service takes, typed the same twice. */
export const newPasswordReady = (password: string, repeat: string) => password.length >= PASSWORD_MIN && password.length <= PASSWORD_MAX && password === repeat;

export function NewPasswordFields({
  password,
  repeat,
  onPassword,
  onRepeat,
  repeatLabel,
}: {
  password: string;
  repeat: string;
  onPassword: (value: string) => void;
  onRepeat: (value: string) => void;
  repeatLabel: string;
}) {
  const tooShort = password.length > 0 && password.length < PASSWORD_MIN;
  // Said here, not by the service's "Too big: expected string to have <=1024 characters" after a submit.
  const tooLong = password.length > PASSWORD_MAX;
  const mismatch = repeat.length > 0 && repeat !== password;
  return (
    <>
      <label>
        New password
        <input
          type="password"
          autoComplete="new-password"
          value={password}
          onChange={(e) => onPassword(e.target.value)}
          aria-invalid={tooShort || tooLong}
          aria-describedby="password-rule"
          required
          minLength={PASSWORD_MIN}
        />
      </label>
      <p id="password-rule" className={tooShort || tooLong ? 'error' : 'muted'}>
        {tooLong
          ? `At most ${count(PASSWORD_MAX)} characters (${count(password.length - PASSWORD_MAX)} too many).`
          : `At least ${PASSWORD_MIN} characters${tooShort ? ` (${PASSWORD_MIN - password.length} more)` : ''}.`}
      </p>
      <label>
        {repeatLabel}
        <input
          type="password"
          autoComplete="new-password"
          value={repeat}
          onChange={(e) => onRepeat(e.target.value)}
          aria-invalid={mismatch}
          aria-describedby="password-repeat-rule"
          required
        />
      </label>
      {/* There before the message is: a live region inserted already filled goes unread, and the field said only "invalid". */}
      <div id="password-repeat-rule" aria-live="polite">
        {mismatch && <p className="error">The two passwords differ.</p>}
      </div>
    </>
  );
}
