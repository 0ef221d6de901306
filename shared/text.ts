// Text cut to what its receiver takes: a Jira field, an answer's alert text, a model's
// tool result, an error naming the sender's key. Never through a surrogate pair, so a
// cut never leaves half a character (which JSON encoders turn into U+FFFD or refuse).
// And the check that parsed JSON holds only Unicode text (no lone surrogate).

/** The first `max` UTF-16 units of `text`, one fewer when the last would be half a surrogate pair. */
export function sliceChars(text: string, max: number): string {
  if (text.length <= max) return text;
  return text.slice(0, Math.max(0, max)).replace(/[\uD800-\uDBFF]$/, '');
}

/** `text` within `max` characters (UTF-16 units), a cut marked with an ellipsis. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${sliceChars(text, max - 1)}…`;
}

/** Half a surrogate pair without its other half. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether a parsed JSON value has a string (or member name) with a lone surrogate: not Unicode text, which
 * I-JSON (RFC 7493 §2.1) forbids and a UTF-8 store cannot hold. Walked without recursion: JSON.parse takes
 * nesting deeper than the call stack.
 */
export function hasLoneSurrogate(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string') {
      if (LONE_SURROGATE.test(next)) return true;
    } else if (Array.isArray(next)) {
      for (const item of next) pending.push(item);
    } else if (next !== null && typeof next === 'object') {
      for (const [key, item] of Object.entries(next)) {
        if (LONE_SURROGATE.test(key)) return true;
        pending.push(item);
      }
    }
  }
  return false;
}
