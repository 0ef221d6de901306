// Text cut to what its receiver takes: a Jira field, an answer's alert text, a model's
// tool result, an error naming the sender's key. Never through a surrogate pair, so a
// cut never leaves half a character (which JSON encoders turn into U+FFFD or refuse).

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
