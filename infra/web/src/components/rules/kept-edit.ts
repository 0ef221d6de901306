// An unsaved rule-set edit, kept in the tab's sessionStorage per signed-in user and
// rule set, so switching rule-set tabs or leaving the page does not lose it, nor
// does a session that expires mid-edit (keptKey): signing out removes it.
import { readKept, writeKept } from '../../session';
import type { RuleSetKey } from './api';

export interface KeptEdit {
  /** The version the edit is based on, and its text. */
  base: { version: number; content: string };
  draft: string;
  /** The text last proposed from this edit: proposing it again as it is would only repeat the proposal. */
  proposed: string | null;
  /** That proposal's id: once it is reviewed or withdrawn (elsewhere too), the text may be proposed again. */
  proposedId?: string | null;
}

const nameOf = (set: RuleSetKey) => `rules.${set}`;
const isEdit = (kept: unknown): kept is KeptEdit => {
  const edit = kept as KeptEdit | null;
  return typeof edit?.draft === 'string' && typeof edit.base?.content === 'string' && typeof edit.base.version === 'number';
};

export function readEdit(user: string, set: RuleSetKey): KeptEdit | null {
  return readKept(user, nameOf(set), isEdit);
}

/** A proposal of `text` was withdrawn: the kept edit may propose that text again (the Rules page said it waited for review). */
export function forgetProposed(user: string, set: RuleSetKey, text: string): void {
  const kept = readEdit(user, set);
  if (kept?.proposed === text) keepEdit(user, set, { ...kept, proposed: null, proposedId: null });
}

/** Keeps `edit`, or drops what was kept when it is null. */
export function keepEdit(user: string, set: RuleSetKey, edit: KeptEdit | null): void {
  writeKept(user, nameOf(set), edit);
}
