// Text a ticket carries, cut to what its receiver takes.

/** `text` within `max` characters (UTF-16 units), a cut marked with an ellipsis and never through a surrogate pair. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max - 1).replace(/[\uD800-\uDBFF]$/, '')}…`;
}
