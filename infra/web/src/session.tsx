// The signed-in user for this tab: the token lives in sessionStorage, so a reload
// stays signed in and closing the tab ends it. Sign-out sends X-Session-Duration
// (whole seconds since sign-in), as the contract's logout audit expects. A 401
// from any call (expired or revoked token) ends the session with a message.
// While the tab is open, a token past half its life is traded for a fresh one of the same
// session (POST /api/auth/renew), so a console left open (a wall screen) stays signed in
// until the session's longest life (shared/auth/README.md).
// Signing out also drops everything the tab kept for the user (chat transcripts,
// unsaved rule edits), so nothing of theirs is left readable in the tab after
// they leave. A session that merely ended (a 401) keeps the user's unsaved work
// (keptKey, readKept, writeKept: a rule edit, an issue's triage edit) for them to sign in again and go on; another user
// signing in next drops it unread.
import { useQueryClient } from '@tanstack/react-query';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useRef, useState } from 'react';
import { ApiProblem, call, configureClient, endpoint } from './api/client';
import type { Answer, Role } from './api/types';

type Login = Answer<'auth', 'login'>;
export type User = Login['user'];

interface Stored {
  token: string;
  user: User;
  signedInAt: number;
  /** When the token arrived (this browser's clock, ms): its renewal is due half its lifetime later, whatever the two clocks say. */
  tokenAt?: number;
}

/** Every key this console keeps in the tab's sessionStorage starts with this: ending the session removes them all. */
export const PREFIX = 'fleet-health.';
const KEY = `${PREFIX}session`;
const logoutEndpoint = endpoint<'auth', 'logout'>('POST', '/api/auth/logout');
const meEndpoint = endpoint<'auth', 'me'>('GET', '/api/auth/me');
const renewEndpoint = endpoint<'auth', 'renew'>('POST', '/api/auth/renew');
/** A renewal that failed (not a 401, which ends the session) is tried again this much later, while the token lives. */
const RENEW_RETRY_MS = 60_000;
/** The account is read again at most this often (on load and when the window regains focus). */
const ACCOUNT_RECHECK_MS = 30_000;

/** Where a user's unsaved work is kept in the tab: over an expired session, for that user only. */
const KEPT = `${PREFIX}kept.`;
/** The tab's storage key for `name` (e.g. `rules.issue`) of `username`'s unsaved work; `/` is in no username. */
export const keptKey = (username: string, name: string) => `${KEPT}${username}/${name}`;

/** `username`'s unsaved work kept under `name`, when it is there and `valid` takes it (a stored shape of another build is not). */
export function readKept<T>(username: string, name: string, valid: (kept: unknown) => kept is T): T | null {
  try {
    const kept: unknown = JSON.parse(sessionStorage.getItem(keptKey(username, name)) ?? 'null');
    return valid(kept) ? kept : null;
  } catch {
    return null;
  }
}

/** Keeps `username`'s unsaved work under `name`, or drops it when `work` is null. */
export function writeKept(username: string, name: string, work: unknown): void {
  try {
    if (work === null) sessionStorage.removeItem(keptKey(username, name));
    else sessionStorage.setItem(keptKey(username, name), JSON.stringify(work));
  } catch {
    // storage full or unavailable: the page still works, the work is just not kept
  }
}

/** Removes the session and everything else this console keeps in the tab's storage, except what `keep` names. */
function forgetTab(keep: (key: string) => boolean = () => false): void {
  const keys = Array.from({ length: sessionStorage.length }, (_, i) => sessionStorage.key(i));
  for (const key of keys) if (key?.startsWith(PREFIX) && !keep(key)) sessionStorage.removeItem(key);
}

function readStored(): Stored | null {
  try {
    const raw = sessionStorage.getItem(KEY);
    return raw ? (JSON.parse(raw) as Stored) : null;
  } catch {
    return null;
  }
}

interface SessionValue {
  user: User | null;
  /** Why the last session ended, shown on the sign-in page. */
  notice: string | null;
  /** Whether the session ended by Sign out: sign-in then leads to the start page, not back to the page signed out from. */
  signedOut: boolean;
  /** The account's role changed while signed in (read again from the service): shown until dismissed. */
  roleChange: { from: Role; to: Role } | null;
  dismissRoleChange(): void;
  signIn(answer: Login): void;
  signOut(): Promise<void>;
  can(...roles: Role[]): boolean;
}

const SessionContext = createContext<SessionValue | null>(null);

let current: Stored | null = readStored();

/** A problem's detail as a sentence of its own: a full stop added where it has none. */
const sentence = (text: string): string => (/[.!?]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`);

/** What the console reads of its token: the session (`jti`, kept by renewals), when it was signed and when it expires (epoch seconds). */
interface TokenTimes {
  session: string;
  iat: number;
  exp: number;
}

/** The token's claims the console schedules by; the service checks them, the console only reads them. */
function tokenTimes(token: string): TokenTimes | null {
  try {
    const payload: unknown = JSON.parse(atob((token.split('.')[1] ?? '').replace(/-/g, '+').replace(/_/g, '/')));
    if (typeof payload !== 'object' || payload === null) return null;
    const { jti, iat, exp } = payload as Record<string, unknown>;
    return typeof jti === 'string' && typeof iat === 'number' && typeof exp === 'number' ? { session: jti, iat, exp } : null;
  } catch {
    return null;
  }
}

/** The session a token belongs to: its `jti` (a renewal keeps it), or the token itself when it names none. */
const sessionOf = (token: string): string => tokenTimes(token)?.session ?? token;

/** The signed-in session, or null: what a request's late answer compares to know its session is still the tab's (a renewal keeps it). */
export const sessionId = (): string | null => (current ? sessionOf(current.token) : null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [stored, setStored] = useState<Stored | null>(current);
  const [notice, setNotice] = useState<string | null>(null);
  const [signedOut, setSignedOut] = useState(false);
  const [roleChange, setRoleChange] = useState<{ from: Role; to: Role } | null>(null);
  const queryClient = useQueryClient();

  const end = useCallback(
    (message: string | null, keepUnsaved = false) => {
      current = null;
      forgetTab(keepUnsaved ? (key) => key.startsWith(KEPT) : undefined);
      queryClient.clear();
      setNotice(message);
      setSignedOut(false);
      setRoleChange(null);
      setStored(null);
    },
    [queryClient],
  );

  // Set while signed in: reads the account again now (a 403 may mean a demotion the console has not seen).
  const recheckAccount = useRef<() => void>(() => undefined);
  useEffect(() => {
    configureClient({
      token: () => current?.token ?? null,
      // The service's sentence as it is, between the console's two: "(The bearer token is … valid.)." read as a slip.
      unauthorized: (problem: ApiProblem) => end(`Your session has ended. ${sentence(problem.detail)} Sign in again.`, true),
      forbidden: () => recheckAccount.current(),
    });
  }, [end]);

  // The service checks the account's current role on every call; the console follows it, so an admin demoted (or a
  // viewer promoted) since signing in is shown the controls they have now, not those of the role at sign-in.
  const session = stored ? sessionOf(stored.token) : null;
  useEffect(() => {
    if (!session) return;
    let checked = 0;
    // One read in flight at a time: the 403s of a page's several queries ask for one more read after it, not one each.
    let reading = false;
    let readAgain = false;
    const recheck = (now = false) => {
      if (!now && Date.now() - checked < ACCOUNT_RECHECK_MS) return;
      if (reading) {
        readAgain ||= now;
        return;
      }
      reading = true;
      checked = Date.now();
      call(meEndpoint)
        .then(
          (me) => {
            if (!current || sessionId() !== session) return; // signed out or in again meanwhile
            const was = current.user;
            if (me.role === was.role && me.name === was.name && me.email === was.email && me.username === was.username) return;
            current = { ...current, user: me };
            sessionStorage.setItem(KEY, JSON.stringify(current));
            // Said, not only done: a form the new role may not use goes from under the user's hands.
            if (me.role !== was.role) setRoleChange((change) => ({ from: change?.from ?? was.role, to: me.role }));
            setStored(current);
          },
          (error: unknown) => {
            // A 401 ends the session by itself; anything else leaves it as it was. A 403 of this read itself (something in
            // front of the service) asked for another read: not taken, or the reads would follow one another forever.
            if (error instanceof ApiProblem && error.status === 403) readAgain = false;
          },
        )
        .finally(() => {
          reading = false;
          if (readAgain) {
            readAgain = false;
            recheck(true);
          }
        });
    };
    const onFocus = () => recheck();
    recheck();
    recheckAccount.current = () => recheck(true);
    window.addEventListener('focus', onFocus);
    return () => {
      readAgain = false;
      recheckAccount.current = () => undefined;
      window.removeEventListener('focus', onFocus);
    };
  }, [session]);

  // Renewal: half the token's life after it arrived (timed by this browser's clock alone, so a clock set wrong does not
  // make it renew at once, and again), and on coming back (a laptop woken, a tab shown) once that is past. At the
  // session's end every renewal expires when the token it replaces does (both are cut at it), but one such answer is
  // not the end yet: JWT_TTL_SECONDS halved gives the renewal due at half the old life that same expiry. Two running
  // are: the second is signed half the renewed life later, and a lifetime that is not cut moves its expiry on by that
  // much. Then none is asked for again. One that expires sooner is taken and renewed in its turn (JWT_TTL_SECONDS was
  // lowered).
  useEffect(() => {
    if (!session) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let renewing = false;
    /** Renewals running that expired when the token they replaced did: two are the session's end. */
    let unchanged = 0;
    let stopped = false;
    const due = (): number | null => {
      const times = current && tokenTimes(current.token);
      if (!current || !times || times.session !== session || unchanged >= 2) return null;
      return (current.tokenAt ?? current.signedInAt) + ((times.exp - times.iat) * 1000) / 2;
    };
    const schedule = (delay?: number) => {
      clearTimeout(timer);
      const at = due();
      if (at !== null && !stopped) timer = setTimeout(renewNow, delay ?? Math.max(0, at - Date.now()));
    };
    const renewNow = () => {
      if (renewing || stopped || due() === null) return;
      renewing = true;
      const was = tokenTimes(current!.token)!;
      call(renewEndpoint)
        .then(
          (answer) => {
            const now = tokenTimes(answer.access_token);
            if (!current || !now || now.session !== session || sessionId() !== session) return; // signed out or in again meanwhile
            unchanged = now.exp === was.exp ? unchanged + 1 : 0;
            const user = current.user;
            current = { ...current, token: answer.access_token, user: answer.user, tokenAt: Date.now() };
            sessionStorage.setItem(KEY, JSON.stringify(current));
            if (answer.user.role !== user.role) setRoleChange((change) => ({ from: change?.from ?? user.role, to: answer.user.role }));
            setStored(current);
            schedule();
          },
          // A 401 has ended the session (the client's handler); anything else is tried again while the token lives.
          () => schedule(RENEW_RETRY_MS),
        )
        .finally(() => {
          renewing = false;
        });
    };
    const onReturn = () => {
      const at = due();
      if (at !== null && Date.now() >= at && document.visibilityState === 'visible') renewNow();
    };
    schedule();
    window.addEventListener('focus', onReturn);
    document.addEventListener('visibilitychange', onReturn);
    return () => {
      stopped = true;
      clearTimeout(timer);
      window.removeEventListener('focus', onReturn);
      document.removeEventListener('visibilitychange', onReturn);
    };
  }, [session]);

  const value = useMemo<SessionValue>(
    () => ({
      user: stored?.user ?? null,
      notice,
      signedOut,
      roleChange: roleChange && roleChange.from !== roleChange.to ? roleChange : null,
      dismissRoleChange: () => setRoleChange(null),
      signIn(answer) {
        // Unsaved work kept over an ended session is its user's alone.
        forgetTab((key) => !key.startsWith(KEPT) || key.startsWith(keptKey(answer.user.username, '')));
        current = { token: answer.access_token, user: answer.user, signedInAt: Date.now() };
        sessionStorage.setItem(KEY, JSON.stringify(current));
        setNotice(null);
        setSignedOut(false);
        setRoleChange(null);
        setStored(current);
      },
      async signOut() {
        const seconds = current ? Math.max(0, Math.round((Date.now() - current.signedInAt) / 1000)) : 0;
        await call(logoutEndpoint, { headers: { 'x-session-duration': String(seconds) } }).catch(() => undefined);
        end('You have signed out.');
        // The next person to sign in on this tab is not taken to the page this one left.
        setSignedOut(true);
      },
      can: (...roles) => Boolean(stored && roles.includes(stored.user.role)),
    }),
    [stored, notice, signedOut, roleChange, end],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside SessionProvider');
  return value;
}
