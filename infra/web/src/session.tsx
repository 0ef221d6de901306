// The signed-in user for this tab: the token lives in sessionStorage, so a reload
// stays signed in and closing the tab ends it. Sign-out sends X-Session-Duration
// (whole seconds since sign-in), as the contract's logout audit expects. A 401
// from any call (expired or revoked token) ends the session with a message.
// Ending it also drops what the tab kept for the user (chat transcripts), so
// nothing of theirs is left readable in the tab after they sign out.
import { useQueryClient } from '@tanstack/react-query';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import { type ApiProblem, call, configureClient, endpoint } from './api/client';
import type { Answer, Role } from './api/types';

type Login = Answer<'auth', 'login'>;
export type User = Login['user'];

interface Stored {
  token: string;
  user: User;
  signedInAt: number;
}

/** Every key this console keeps in the tab's sessionStorage starts with this: ending the session removes them all. */
export const PREFIX = 'fleet-health.';
const KEY = `${PREFIX}session`;
const logoutEndpoint = endpoint<'auth', 'logout'>('POST', '/api/auth/logout');

/** Removes the session and everything else this console keeps in the tab's storage. */
function forgetTab(): void {
  const keys = Array.from({ length: sessionStorage.length }, (_, i) => sessionStorage.key(i));
  for (const key of keys) if (key?.startsWith(PREFIX)) sessionStorage.removeItem(key);
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
  signIn(answer: Login): void;
  signOut(): Promise<void>;
  can(...roles: Role[]): boolean;
}

const SessionContext = createContext<SessionValue | null>(null);

let current: Stored | null = readStored();

export function SessionProvider({ children }: { children: ReactNode }) {
  const [stored, setStored] = useState<Stored | null>(current);
  const [notice, setNotice] = useState<string | null>(null);
  const queryClient = useQueryClient();

  const end = useCallback(
    (message: string | null) => {
      current = null;
      forgetTab();
      queryClient.clear();
      setNotice(message);
      setStored(null);
    },
    [queryClient],
  );

  useEffect(() => {
    configureClient({
      token: () => current?.token ?? null,
      unauthorized: (problem: ApiProblem) => end(`Your session has ended (${problem.detail}). Sign in again.`),
    });
  }, [end]);

  const value = useMemo<SessionValue>(
    () => ({
      user: stored?.user ?? null,
      notice,
      signIn(answer) {
        current = { token: answer.access_token, user: answer.user, signedInAt: Date.now() };
        sessionStorage.setItem(KEY, JSON.stringify(current));
        setNotice(null);
        setStored(current);
      },
      async signOut() {
        const seconds = current ? Math.max(0, Math.round((Date.now() - current.signedInAt) / 1000)) : 0;
        await call(logoutEndpoint, { headers: { 'X-Session-Duration': String(seconds) } }).catch(() => undefined);
        end('You have signed out.');
      },
      can: (...roles) => Boolean(stored && roles.includes(stored.user.role)),
    }),
    [stored, notice, end],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside SessionProvider');
  return value;
}

/** Admins and superadmins act (refresh, triage); viewers only read. */
export const ADMINS: Role[] = ['admin', 'superadmin'];
