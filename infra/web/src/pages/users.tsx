// People (/users, admins and superadmins): every account with its role and whether it
// is active; inviting someone (an admin invites admins and viewers, a superadmin any
// role). When the service sends no mail the answer carries the activation token, shown
// as the link to hand over. A pending invitation (expired or not) is sent again from its
// row: "Invite again…" fills the form, where the role can still change before sending. Superadmins change roles, deactivate and delete
// others' accounts (their own row offers none of it: the service refuses it); the service's 409 guards
// (the last active superadmin, a change made meanwhile) are explained with its own words next to the table. Each change
// sends the row's version as If-Match: one another superadmin made since this page read the list is a 409, said as such
// with the account's state now, and the list is read again (never a silent overwrite of their change). A role picked is applied only by its "Save role".
// An account the directory's login made (LDAP) is deactivated, never deleted: its next
// login would make it again. A superadmin resets another local account's password: it stops
// working at once, the person's sessions end, and a single-use link (mailed, or shown here to
// hand over) lets them choose a new one on /reset-password. A half-filled invitation is kept in
// the tab over a session that ends (components/admin/kept-invite.ts).
import { type FormEvent, type RefObject, useEffect, useId, useMemo, useRef, useState } from 'react';
import { type ApiProblem, endpoint } from '../api/client';
import { invalidatePrefixes, useApi, useApiMutation } from '../api/hooks';
import { useQueryClient } from '@tanstack/react-query';
import type { Answer, Role } from '../api/types';
import { userEtag } from '../../../../shared/http/etags.js';
import { CopyField } from '../components/admin/copy-field';
import { keepInvite, readInvite } from '../components/admin/kept-invite';
import { Email } from '../components/email';
import { ScrollRegion } from '../components/scroll-region';
import { utc, When } from '../components/time';
import { Empty, Loading, Problem, RetryAfterNote } from '../components/states';
import { MAY_CHANGE_USERS, MAY_RESET_PASSWORDS } from '../api/access';
import { useSession } from '../session';
import './users.css';
import { Button } from '../components/button';

const usersEp = endpoint<'settings', 'listUsers'>('GET', '/api/settings/users');
const inviteEp = endpoint<'settings', 'inviteUser'>('POST', '/api/settings/users/invite');
const patchEp = endpoint<'settings', 'patchUser'>('PATCH', '/api/settings/users/{email}');
const deleteEp = endpoint<'settings', 'deleteUser'>('DELETE', '/api/settings/users/{email}');
const resetEp = endpoint<'settings', 'resetPassword'>('POST', '/api/settings/users/{email}/password-reset');

type ManagedUser = Answer<'settings', 'listUsers'>['users'][number];
// Every role, in the order offered: a role the service adds is a type error here until it is placed.
const ROLE_ORDER: Record<Role, number> = { superadmin: 0, admin: 1, viewer: 2 };
const ROLES = (Object.keys(ROLE_ORDER) as Role[]).sort((a, b) => ROLE_ORDER[a] - ROLE_ORDER[b]);
const INVALIDATES = ['/api/settings/users', '/api/settings/audit'];

/** What the last change on the table did, shown above it (a 409 with the service's reason); a reset not mailed, with its link. */
interface Outcome {
  email: string;
  ok: boolean;
  text: string;
  link?: string;
  /** A refused role change, deactivation or delete: the guards that refuse those are explained under it. */
  guarded?: boolean;
}

/** The account whose destructive action (delete, or password reset) waits for its confirmation. */
interface Confirming {
  email: string;
  what: 'delete' | 'reset';
}

/** A pending account to invite again, put into the invite form (a new object each time: the same row twice fills it twice). */
interface Reinvite {
  email: string;
  name: string;
  role: Role;
}

/** Why the mail did not go (an invite's or a reset's email_problem), as the superadmin or inviter reads it. */
const MAIL_PROBLEMS: Record<NonNullable<Answer<'settings', 'inviteUser'>['email_problem']>, string> = {
  not_configured: 'no mail was sent: the service has no mail sender configured (SES_FROM_ADDRESS).',
  refused: 'the mail service refused the message (the service log names why: often a sandboxed SES account or an unverified address).',
  no_answer: 'the mail service did not answer in time, or failed while sending: the mail may still arrive, or not.',
};

/**
 * The If-Match of a change made on a row: the account's version as the list answered it, in the service's own ETag
 * format, so a change another superadmin made since is a 409 the page explains, never overwritten without a word.
 */
const asRead = (u: ManagedUser) => userEtag(u.version);

/** What a 409 for a change made on a stale row says: who changed what is not known here, what the account is now is (its `current`). */
function changedMeanwhile(current: unknown): string {
  const now = current as Partial<Pick<ManagedUser, 'role' | 'is_active'>> | undefined;
  const state = now?.role ? ` It is now ${now.role}, ${now.is_active ? 'active' : 'inactive'}.` : '';
  return `someone else changed this account after this page read it, so nothing was changed.${state} The table shows it as it is now: make your change again if it still applies.`;
}

/** An invited account's username is its email (shared/auth/user-admin.ts): the sign-in form asks for a username. */
const SIGN_IN_AS = (email: string) => `Once activated, they sign in with their email, ${email}, as the username.`;

export default function UsersPage() {
  const { can } = useSession();
  const users = useApi(usersEp);
  // Changing roles, deactivating and deleting: PATCH and DELETE of an account (api/access.ts).
  const superadmin = can(...MAY_CHANGE_USERS);
  const [reinvite, setReinvite] = useState<Reinvite | null>(null);
  const pending = useMemo(() => new Set((users.data?.users ?? []).filter((u) => u.invitation_pending).map((u) => u.email.toLowerCase())), [users.data]);
  return (
    <section className="users-page" aria-labelledby="users-title">
      <h1 id="users-title">People</h1>
      <p className="muted">
        Everyone who can sign in to the console, and invitations not yet accepted (inactive until the invitee sets a password).
        {superadmin
          ? ' As a superadmin you change roles, deactivate and delete accounts (a deleted account’s pending rule proposals are rejected with it), and reset passwords.'
          : ' Only a superadmin changes roles, resets passwords or removes accounts.'}
      </p>
      <InviteForm reinvite={reinvite} pending={pending} />
      <h2 id="users-list-title">Accounts</h2>
      {users.isPending ? (
        <Loading what="the accounts" />
      ) : users.isError ? (
        <Problem error={users.error} retry={() => void users.refetch()} />
      ) : users.data.users.length === 0 ? (
        <Empty>No accounts yet. Invite someone above.</Empty>
      ) : (
        <UserTable users={users.data.users} manage={superadmin} inviteAgain={(u) => setReinvite({ email: u.email, name: u.display_name, role: u.role })} />
      )}
    </section>
  );
}

/**
 * The invitation form. `pending` are the addresses whose invitation is not yet accepted: inviting one again replaces
 * its invitation (the service renews it), so the link sent before stops working, which the form says before sending.
 */
function InviteForm({ reinvite, pending }: { reinvite: Reinvite | null; pending: ReadonlySet<string> }) {
  const { can, user } = useSession();
  const roles = can('superadmin') ? ROLES : ROLES.filter((r) => r !== 'superadmin');
  const invite = useApiMutation(inviteEp, INVALIDATES);
  // A form filled before the session ended (or before leaving the page) starts where it was left.
  const [kept] = useState(() => (user ? readInvite(user.username, roles) : null));
  const [email, setEmail] = useState(kept?.email ?? '');
  const [name, setName] = useState(kept?.name ?? '');
  const [role, setRole] = useState<Role>(kept?.role ?? 'viewer');
  const username = user?.username;
  useEffect(() => {
    if (username) keepInvite(username, { email, name, role });
  }, [username, email, name, role]);
  const [result, setResult] = useState<{ email: string; renewed: boolean; answer: Answer<'settings', 'inviteUser'> } | null>(null);
  // As the service keeps it: an address in lower case.
  const address = email.trim().toLowerCase();
  const replaces = pending.has(address);
  const id = useId();
  const emailInput = useRef<HTMLInputElement>(null);
  const { reset } = invite;
  useEffect(() => {
    if (!reinvite) return;
    setEmail(reinvite.email);
    setName(reinvite.name);
    setRole(reinvite.role);
    setResult(null);
    reset();
    emailInput.current?.focus();
  }, [reinvite, reset]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setResult(null);
    invite.mutate(
      { body: { email: address, display_name: name.trim(), role } },
      {
        onSuccess: (answer) => {
          setResult({ email: address, renewed: replaces, answer });
          setEmail('');
          setName('');
        },
      },
    );
  };

  const link = result?.answer.activation_token ? `${location.origin}/activate#token=${encodeURIComponent(result.answer.activation_token)}` : null;
  return (
    <section className="card users-invite" aria-labelledby={`${id}-t`}>
      <h2 id={`${id}-t`}>Invite someone</h2>
      <form onSubmit={submit} className="users-invite-form">
        <label>
          Email
          {/* type=email takes "ops@example", which the service refuses as "email: Invalid email address": a domain with a dot is asked for here. */}
          <input
            ref={emailInput}
            type="email"
            pattern="[^@\s]+@[^@\s]+\.[^@\s]+"
            title="An address such as name@example.com"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            required
            autoComplete="off"
            maxLength={254}
            aria-describedby={replaces ? `${id}-replaces` : undefined}
          />
        </label>
        <label>
          Display name
          <input value={name} onChange={(e) => setName(e.target.value)} required autoComplete="off" maxLength={128} />
        </label>
        <label>
          Role
          <select value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {roles.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <Button type="submit" className="primary" disabled={invite.isPending || !email.trim() || !name.trim()}>
          {invite.isPending ? 'Inviting…' : 'Send invitation'}
        </Button>
      </form>
      {/* Always there, and polite: said to a screen reader in the Email field as the address typed comes to match. */}
      <p id={`${id}-replaces`} className="muted users-invite-replaces" aria-live="polite">
        {replaces ? `${address} has an invitation not yet accepted: sending this one replaces it, and the link sent before stops working.` : ''}
      </p>
      {invite.isError && (
        <div className="state problem" role="alert">
          <strong>The invitation was not created</strong>
          <p>{invite.error.detail}</p>
          <RetryAfterNote problem={invite.error} />
          {invite.error.status === 409 && <p>An address that is an account already cannot be invited; one whose invitation is still pending can.</p>}
        </div>
      )}
      {/* There before the outcome: a status region inserted already filled is skipped by many screen readers. */}
      <div role="status">
        {result && (
          <div className="users-invited">
            {result.renewed && <p>Invited again: the link sent before no longer works.</p>}
            {result.answer.email_sent ? (
              <p>
                Invitation mailed to <strong>{result.email}</strong>. The link in it lets them set a password. {SIGN_IN_AS(result.email)}
              </p>
            ) : (
              <>
                <p>
                  <strong>{result.email}</strong> is invited, but {MAIL_PROBLEMS[result.answer.email_problem ?? 'not_configured']} Send them this activation
                  link yourself; it works once. {SIGN_IN_AS(result.email)}
                </p>
                {link && <CopyField label="Activation link" value={link} />}
              </>
            )}
          </div>
        )}
      </div>
    </section>
  );
}

function UserTable({ users, manage, inviteAgain }: { users: ManagedUser[]; manage: boolean; inviteAgain: (u: ManagedUser) => void }) {
  const { user: me, can } = useSession();
  const patch = useApiMutation(patchEp, INVALIDATES);
  const remove = useApiMutation(deleteEp, INVALIDATES);
  const resetPassword = useApiMutation(resetEp, INVALIDATES);
  const mayReset = can(...MAY_RESET_PASSWORDS);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const outcomeBox = useRef<HTMLDivElement>(null);
  const focusOutcome = useRef(false);
  useEffect(() => {
    if (!outcome || !focusOutcome.current) return;
    focusOutcome.current = false;
    (outcomeBox.current?.querySelector('input') ?? outcomeBox.current)?.focus();
  }, [outcome]);
  const [confirming, setConfirming] = useState<Confirming | null>(null);
  const busy = patch.isPending || remove.isPending || resetPassword.isPending;
  // The confirmation replaces the focused "Delete…" or "Reset password…" button (and Cancel brings it back): keyboard focus follows, not dropping to the page.
  const confirmButton = useRef<HTMLButtonElement>(null);
  const askButtons = useRef(new Map<string, HTMLButtonElement>());
  const cancelled = useRef<string | null>(null);
  useEffect(() => {
    if (confirming) confirmButton.current?.focus();
    else if (cancelled.current) askButtons.current.get(cancelled.current)?.focus();
    cancelled.current = null;
  }, [confirming]);
  const confirmation: Confirmation = {
    busy,
    confirming,
    ask: setConfirming,
    cancel: (c) => {
      cancelled.current = confirmingKey(c);
      setConfirming(null);
    },
    askRef: (key) => (el) => {
      if (el) askButtons.current.set(key, el);
      else askButtons.current.delete(key);
    },
    confirmRef: confirmButton,
  };

  const client = useQueryClient();
  const failed =
    (email: string, what: string, guarded = true) =>
    (error: ApiProblem) => {
      // Changed by someone else since this page read it (the If-Match of its row no longer holds): nothing was done,
      // and the table, read again below, shows the account as it is now, which the message names.
      const stale = error.status === 409 && typeof error.body.current_etag === 'string';
      // The note on the service's guards explains their 409s; a 403 is a role the account no longer has (the session
      // reads it again, and the controls it no longer allows go).
      setOutcome({
        email,
        ok: false,
        text: stale ? `Could not ${what} ${email}: ${changedMeanwhile(error.body.current)}` : `Could not ${what} ${email}: ${error.detail}`,
        guarded: guarded && error.status === 409 && !stale,
      });
      // Gone (404) or changed (409) by someone else meanwhile: the list is read again, so it shows the account as it is
      // now (or no longer), not the row this page read.
      if (error.status === 404 || error.status === 409) void invalidatePrefixes(client, ['/api/settings/users']);
    };

  const change = (u: ManagedUser, body: { role?: Role; is_active?: boolean }, what: string, settled?: () => void) => {
    setOutcome(null);
    patch.mutate(
      { params: { email: u.email }, body, headers: { 'if-match': asRead(u) } },
      {
        onSuccess: (answer) =>
          setOutcome({ email: u.email, ok: true, text: `${answer.user.email} is now ${answer.user.role}, ${answer.user.is_active ? 'active' : 'inactive'}.` }),
        onError: failed(u.email, what),
        onSettled: settled,
      },
    );
  };
  const destroy = (u: ManagedUser) => {
    setOutcome(null);
    setConfirming(null);
    // The confirmation and the row go: focus moves to what the delete answers, not to the top of the page.
    focusOutcome.current = true;
    remove.mutate(
      { params: { email: u.email }, headers: { 'if-match': asRead(u) } },
      { onSuccess: () => setOutcome({ email: u.email, ok: true, text: `${u.email} was deleted.` }), onError: failed(u.email, 'delete') },
    );
  };
  const reset = (u: ManagedUser) => {
    setOutcome(null);
    setConfirming(null);
    // The confirmation it came from goes and the row stays: focus moves to what the reset answers (its link, to copy).
    focusOutcome.current = true;
    resetPassword.mutate(
      { params: { email: u.email }, headers: { 'if-match': asRead(u) } },
      {
        onSuccess: (answer) => {
          const until = utc(answer.expires_at);
          setOutcome(
            answer.email_sent
              ? {
                  email: u.email,
                  ok: true,
                  text: `The password of ${u.email} was reset. A link to choose a new one was mailed to them; it works once, until ${until}.`,
                }
              : {
                  email: u.email,
                  ok: true,
                  text: `The password of ${u.email} was reset, but ${MAIL_PROBLEMS[answer.email_problem ?? 'not_configured']} Send them this link yourself; it works once, until ${until}.`,
                  ...(answer.reset_token ? { link: `${location.origin}/reset-password#token=${encodeURIComponent(answer.reset_token)}` } : {}),
                },
          );
        },
        onError: failed(u.email, 'reset the password of', false),
      },
    );
  };

  return (
    <>
      {outcome &&
        (outcome.ok ? (
          <div className="notice users-outcome" role="status" tabIndex={-1} ref={outcomeBox}>
            <p>{outcome.text}</p>
            {outcome.link && <CopyField label="Password reset link" value={outcome.link} />}
          </div>
        ) : (
          <div className="state problem users-outcome" role="alert" tabIndex={-1} ref={outcomeBox}>
            <strong>Not changed</strong>
            <p>{outcome.text}</p>
            {outcome.guarded && (
              <p className="muted">
                The service keeps at least one active superadmin, and nobody changes, deactivates or deletes their own account: another superadmin does that.
              </p>
            )}
          </div>
        ))}
      <ScrollRegion label="Accounts">
        <table className="users-table">
          <caption className="visually-hidden">Accounts: name, email, role and whether active</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              {manage && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {users.map((u) => {
              const self = me?.email === u.email;
              return (
                <tr key={u.id} data-email={u.email}>
                  <th scope="row">
                    {u.display_name}
                    {self && <span className="muted"> (you)</span>}
                    {u.source === 'ldap' && <span className="muted"> · directory (LDAP)</span>}
                  </th>
                  <td className="users-email">
                    <Email address={u.email} />
                  </td>
                  <td>
                    {manage && !u.invitation_pending && !self ? (
                      <RoleField user={u} busy={busy} save={(role, done) => change(u, { role }, 'change the role of', done)} />
                    ) : (
                      <span className={`users-role ${u.role}`}>{u.role}</span>
                    )}
                  </td>
                  <td className="users-status-cell">
                    {u.invitation_pending ? (
                      <PendingStatus user={u} inviteAgain={can('superadmin') || u.role !== 'superadmin' ? () => inviteAgain(u) : undefined} />
                    ) : (
                      <span className={`users-status ${u.is_active ? 'active' : 'inactive'}`}>{u.is_active ? 'Active' : 'Inactive'}</span>
                    )}
                    {u.password_reset_pending && <ResetStatus user={u} />}
                  </td>
                  {manage && (
                    <td>
                      <div className="users-actions">
                        {/* The service refuses every change of one's own account (another superadmin makes it): no control that cannot work. */}
                        {self && <span className="muted">Your own account: another superadmin changes it.</span>}
                        {!u.invitation_pending && !self && (
                          <Button
                            type="button"
                            disabled={busy}
                            onClick={() => change(u, { is_active: !u.is_active }, u.is_active ? 'deactivate' : 'reactivate')}
                            aria-label={`${u.is_active ? 'Deactivate' : 'Reactivate'} ${u.email}`}
                          >
                            {u.is_active ? 'Deactivate' : 'Reactivate'}
                          </Button>
                        )}
                        {mayReset && u.source === 'local' && u.is_active && !self && (
                          <ConfirmedAction user={u} what="reset" act={() => reset(u)} {...confirmation} />
                        )}
                        {self ? null : u.source === 'ldap' ? (
                          // Deleting would not keep it out: its next login through the directory makes it again.
                          <span className="muted users-ldap-note">Signs in through the directory: deactivate to keep it out.</span>
                        ) : (
                          <ConfirmedAction user={u} what="delete" act={() => destroy(u)} {...confirmation} />
                        )}
                      </div>
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      </ScrollRegion>
    </>
  );
}

/** The words of an action asked for, then confirmed in place: the button, its question, and its confirming button. */
const CONFIRMED_ACTIONS = {
  delete: { ask: 'Delete…', askLabel: 'Delete', question: 'Delete for good?', confirm: 'Delete', confirmLabel: 'Confirm deleting' },
  reset: {
    ask: 'Reset password…',
    askLabel: 'Reset the password of',
    question: 'End their password and sessions, and make a link to choose a new one?',
    confirm: 'Reset password',
    confirmLabel: 'Confirm resetting the password of',
  },
} as const;

const confirmingKey = (c: Confirming) => `${c.what} ${c.email}`;

/** What the table shares with each confirmed action: which one is asking, and where keyboard focus goes. */
interface Confirmation {
  busy: boolean;
  confirming: Confirming | null;
  ask: (c: Confirming) => void;
  cancel: (c: Confirming) => void;
  /** The ref of an action's button, by its confirmingKey: Cancel gives it focus back. */
  askRef: (key: string) => (el: HTMLButtonElement | null) => void;
  confirmRef: RefObject<HTMLButtonElement | null>;
}

/** A destructive action on one account: its button, which becomes its question with a confirming button and Cancel (or Escape). */
function ConfirmedAction({ user, what, act, ...c }: { user: ManagedUser; what: Confirming['what']; act: () => void } & Confirmation) {
  const words = CONFIRMED_ACTIONS[what];
  const mine: Confirming = { email: user.email, what };
  if (c.confirming && confirmingKey(c.confirming) === confirmingKey(mine)) {
    // Escape takes the question back, as Cancel does (focus returns to the action's button).
    return (
      // biome-ignore lint/a11y/noStaticElementInteractions: the keys are its buttons'; the span only hears Escape from them
      <span
        className="users-confirm"
        onKeyDown={(e) => {
          if (e.key !== 'Escape') return;
          e.preventDefault();
          c.cancel(mine);
        }}
      >
        <span>{words.question}</span>
        <Button ref={c.confirmRef} type="button" className="danger" disabled={c.busy} onClick={act} aria-label={`${words.confirmLabel} ${user.email}`}>
          {words.confirm}
        </Button>
        <button type="button" onClick={() => c.cancel(mine)}>
          Cancel
        </button>
      </span>
    );
  }
  return (
    <Button ref={c.askRef(confirmingKey(mine))} type="button" disabled={c.busy} onClick={() => c.ask(mine)} aria-label={`${words.askLabel} ${user.email}`}>
      {words.ask}
    </Button>
  );
}

/** A single-use link's state (an invitation's, a password reset's): until when it works, or that it expired. */
function LinkStatus({ expires, live, lapsed, className }: { expires: string | undefined; live: string; lapsed: string; className?: string }) {
  const expired = expires !== undefined && Date.parse(expires) <= Date.now();
  return (
    <span className={['users-status', className, expired ? 'expired' : 'inactive'].filter(Boolean).join(' ')}>
      {expired ? lapsed : live}
      {expires && !expired && (
        <span className="muted">
          {' '}
          until <When iso={expires} />
        </span>
      )}
    </span>
  );
}

/** A password reset not yet taken (a superadmin resets again for a new link once it expired). */
const ResetStatus = ({ user }: { user: ManagedUser }) => (
  <LinkStatus expires={user.password_reset_expires_at} live="Password reset" lapsed="Password reset link expired" className="users-reset" />
);

/** A pending invitation's status: until when it works, or that it expired; and the way to send it again (an admin cannot for a superadmin's). */
function PendingStatus({ user, inviteAgain }: { user: ManagedUser; inviteAgain?: () => void }) {
  return (
    <span className="users-pending">
      <LinkStatus expires={user.invitation_expires_at} live="Invited" lapsed="Invitation expired" />
      {inviteAgain && (
        <button type="button" onClick={inviteAgain} aria-label={`Invite ${user.email} again`}>
          Invite again…
        </button>
      )}
    </span>
  );
}

/**
 * A superadmin's role control for one account. Picking a role only marks it: "Save role" applies it, so moving
 * through the options by keyboard (each arrow key a change) changes nobody's role; Escape or "Undo" puts the
 * account's role back. Once the service has answered, the select shows the account's role again (the new one,
 * or the old one after a refusal) and keyboard focus returns to it.
 */
function RoleField({ user, busy, save }: { user: ManagedUser; busy: boolean; save: (role: Role, done: () => void) => void }) {
  const [picked, setPicked] = useState<Role | null>(null);
  const select = useRef<HTMLSelectElement>(null);
  const pending = picked !== null && picked !== user.role;
  // The buttons go away under the focus: it returns to the select once that is enabled again (after a save, when the service answered).
  const refocus = useRef(false);
  useEffect(() => {
    if (!refocus.current || busy) return;
    refocus.current = false;
    select.current?.focus();
  });
  const reset = () => {
    refocus.current = true;
    setPicked(null);
  };
  return (
    <span className="users-role-field">
      <select
        ref={select}
        aria-label={`Role of ${user.email}`}
        value={picked ?? user.role}
        disabled={busy}
        onChange={(e) => setPicked(e.target.value as Role)}
        onKeyDown={(e) => {
          if (e.key === 'Escape' && pending) {
            e.preventDefault();
            reset();
          }
        }}
      >
        {ROLES.map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
      {pending && (
        <>
          <Button type="button" className="primary" disabled={busy} onClick={() => save(picked, reset)} aria-label={`Save role for ${user.email}`}>
            Save role
          </Button>
          <Button type="button" disabled={busy} onClick={reset} aria-label={`Undo role change for ${user.email}`}>
            Undo
          </Button>
        </>
      )}
    </span>
  );
}
