// Re-applying an edit on a newer version of its rule set: a three-way merge by lines (node-diff3) of
// the user's text and the live one against the version the edit started from, so neither side's
// change is lost. Where both changed the same lines, both are kept between conflict markers, as
// git writes them, for the user to settle in the editor; a text holding markers is never saved.
import { diff3Merge } from 'node-diff3';
import type { TextProblem } from './editor-kit';

export const MINE_MARKER = '<<<<<<< your edit';
export const SPLIT_MARKER = '=======';
const theirsMarker = (version: number) => `>>>>>>> version ${version}`;

export interface Reapplied {
  text: string;
  /** Where each conflict's first marker is (1-based lines), in order. */
  conflicts: TextProblem[];
}

/** `mine` (edited from `base`) re-applied on `live`, version `version`, which was also edited from `base`. */
export function reapply(base: string, mine: string, live: string, version: number): Reapplied {
  const out: string[] = [];
  const conflicts: TextProblem[] = [];
  const regions = diff3Merge(mine.split('\n'), base.split('\n'), live.split('\n'), { excludeFalseConflicts: true });
  for (const region of regions) {
    if (region.ok) out.push(...region.ok);
    else if (region.conflict) {
      conflicts.push({
        line: out.length + 1,
        col: 1,
        message: `Your edit and version ${version} change these lines: keep what should stay, then remove the three marker lines.`,
      });
      out.push(MINE_MARKER, ...region.conflict.a, SPLIT_MARKER, ...region.conflict.b, theirsMarker(version));
    }
  }
  return { text: out.join('\n'), conflicts };
}

/** Whether a text still holds any of a conflict's three markers (a whole line each, as reapply writes them). */
export function hasConflictMarkers(text: string): boolean {
  return /^(<<<<<<< your edit|=======|>>>>>>> version \d+)$/m.test(text);
}
