// An unsaved rule-set edit, kept in the tab's sessionStorage per signed-in user and
// rule set, so switching rule-set tabs or leaving the page does not lose it, nor
// does a session that expires mid-edit (keptKey): signing out removes it.
import { keptKey } from '../../session';
import type { RuleSetKey } from './api';

export interface KeptEdit {
  /** The version the edit is based on, and its text. */
  base: { version: number; content: string };
  draft: string;
  /** The text last proposed from this edit: proposing it again as it is would only repeat the proposal. */
  proposed: string | null;
}

const keyOf = (user: string, set: RuleSetKey) => keptKey(user, `rules.${set}`);

export function readEdit(user: string, set: RuleSetKey): KeptEdit | null {
  try {
    const kept = JSON.parse(sessionStorage.getItem(keyOf(user, set)) ?? 'null') as KeptEdit | null;
    return kept && typeof kept.draft === 'string' && typeof kept.base?.content === 'string' && typeof kept.base.version === 'number' ? kept : null;
  } catch {
    return null;
  }
}

/** A proposal of `text` was withdrawn: the kept edit may propose that text again (the Rules page said it waited for review). */
export function forgetProposed(user: string, set: RuleSetKey, text: string): void {
  const kept = readEdit(user, set);
  if (kept?.proposed === text) keepEdit(user, set, { ...kept, proposed: null });
}

/** Keeps `edit`, or drops what was kept when it is null. */
export function keepEdit(user: string, set: RuleSetKey, edit: KeptEdit | null): void {
  try {
    if (edit) sessionStorage.setItem(keyOf(user, set), JSON.stringify(edit));
    else sessionStorage.removeItem(keyOf(user, set));
  } catch {
    // storage full or unavailable: the editor still works, the edit is just not kept
  }
}
