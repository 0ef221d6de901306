// An unsaved triage edit, kept in the tab's sessionStorage per signed-in user and issue (as
// the rules editor keeps its edits: components/rules/kept-edit.ts), so leaving the issue or a
// session that ends mid-edit (a 12-hour token's last minutes of a handover note) does not lose
// it. Signing out removes it; a save or a discard drops it.
import { readKept, writeKept } from '../../session';

export interface KeptTriage<F> {
  /** The stored version the edit started from, and what was stored then: edits made since are told from fields stored since. */
  version: string;
  base: F;
  values: F;
}

const nameOf = (group: string, issueId: string) => `triage.${group}.${issueId}`;

export function readTriage<F extends Record<string, string>>(user: string, group: string, issueId: string, fields: readonly (keyof F)[]): KeptTriage<F> | null {
  const complete = (f: unknown): f is F => typeof f === 'object' && f !== null && fields.every((k) => typeof (f as F)[k] === 'string');
  const isTriage = (kept: unknown): kept is KeptTriage<F> => {
    const edit = kept as KeptTriage<F> | null;
    return typeof edit?.version === 'string' && complete(edit.base) && complete(edit.values);
  };
  return readKept(user, nameOf(group, issueId), isTriage);
}

/** Keeps `edit`, or drops what was kept when it is null. */
export function keepTriage<F>(user: string, group: string, issueId: string, edit: KeptTriage<F> | null): void {
  writeKept(user, nameOf(group, issueId), edit);
}
