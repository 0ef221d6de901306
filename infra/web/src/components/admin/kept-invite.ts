// A half-filled invitation, kept in the tab's sessionStorage per signed-in user (as the rules
// editor and the triage form keep their edits: session.tsx keptKey), so a session that ends
// while the form is filled, or leaving the People page, does not lose it. Signing out removes
// it; a sent invitation, or a form emptied by hand, drops it.
import type { Role } from '../../api/types';
import { readKept, writeKept } from '../../session';

export interface KeptInvite {
  email: string;
  name: string;
  role: Role;
}

const NAME = 'invite';

/** The kept form, when its role is one of `roles` (those the form offers the user now: a role taken from them since is not). */
export function readInvite(user: string, roles: readonly Role[]): KeptInvite | null {
  const isInvite = (kept: unknown): kept is KeptInvite => {
    const form = kept as KeptInvite | null;
    return typeof form?.email === 'string' && typeof form.name === 'string' && roles.includes(form.role);
  };
  return readKept(user, NAME, isInvite);
}

/** Keeps the form as it is, or drops what was kept when nothing is typed in it. */
export function keepInvite(user: string, form: KeptInvite): void {
  writeKept(user, NAME, form.email.trim() || form.name.trim() ? form : null);
}
