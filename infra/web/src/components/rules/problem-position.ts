// Where a refused rule set is wrong: the service's 422 says "at line N, column M"
// for YAML errors, or names a path (`scoring.dimensions.2.red: …`) for schema
// errors; a path is found in the text by its keys' indentation, so both can be
// marked in the editor.
// It imports nothing (the service's tests read it with the rule checker).

/** A problem marked in the editor: 1-based line and column. */
export interface TextProblem {
  line: number;
  col: number;
  message: string;
}

const AT = /at line (\d+), column (\d+)/;

/** Whether a refusal names its line and column itself (a YAML error's), so no "Line N, column M:" goes before it again. */
export const namesPosition = (message: string): boolean => AT.test(message);

/** The first 422 message: the field error's `msg` when present, else the detail. */
export function refusalMessage(body: Record<string, unknown>, detail: string): string {
  const errors = body.errors;
  if (Array.isArray(errors) && errors[0] && typeof (errors[0] as { msg?: unknown }).msg === 'string') return (errors[0] as { msg: string }).msg;
  return detail;
}

/** The line and column a refusal names, or one found from its path; null when it names neither. */
export function locate(message: string, text: string): TextProblem | null {
  const at = AT.exec(message);
  if (at) return { line: Number(at[1]), col: Number(at[2]), message };
  const path = /^([A-Za-z0-9_.-]+): /.exec(message)?.[1];
  if (!path || path === 'rule set') return null;
  const line = lineOfPath(text, path.split('.'));
  return line ? { line: line.line, col: line.col, message } : null;
}

/** A best-effort walk of block YAML: each key (or list index) under the previous one's indentation. */
function lineOfPath(text: string, path: string[]): { line: number; col: number } | null {
  const lines = text.split('\n');
  let from = 0;
  let indent = -1;
  let found: { line: number; col: number } | null = null;
  for (const part of path) {
    let hit = -1;
    if (/^\d+$/.test(part)) {
      // The n-th "- " item at the next deeper indentation.
      let n = -1;
      let itemIndent = -1;
      for (let i = from; i < lines.length; i++) {
        const m = /^(\s*)- /.exec(lines[i]!);
        const lead = /^(\s*)\S/.exec(lines[i]!)?.[1]?.length ?? -1;
        if (lead !== -1 && lead <= indent && !m) break;
        if (m && m[1]!.length > indent - 1 && (itemIndent === -1 || m[1]!.length === itemIndent)) {
          itemIndent = m[1]!.length;
          n++;
          if (n === Number(part)) {
            hit = i;
            indent = itemIndent + 1;
            break;
          }
        }
      }
    } else {
      const key = new RegExp(`^(\\s*(?:- )?)${part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*:`);
      for (let i = from; i < lines.length; i++) {
        const m = key.exec(lines[i]!);
        const lead = /^(\s*)\S/.exec(lines[i]!)?.[1]?.length ?? -1;
        if (i > from && lead !== -1 && lead <= indent && !m && !/^\s*#/.test(lines[i]!)) break;
        if (m && m[1]!.length > indent) {
          hit = i;
          indent = m[1]!.length;
          break;
        }
      }
    }
    if (hit === -1) return found;
    found = { line: hit + 1, col: (/^(\s*(?:- )?)/.exec(lines[hit]!)?.[1]?.length ?? 0) + 1 };
    from = hit + (/^\d+$/.test(part) ? 0 : 1);
  }
  return found;
}
