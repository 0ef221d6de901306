// Text cut to what its receiver takes: a Jira field, an answer's alert text, a model's
// tool result, an error naming the sender's key. Never through a surrogate pair, so a
// cut never leaves half a character (which JSON encoders turn into U+FFFD or refuse).
// And text made Unicode where it enters: a lone surrogate a JSON body escapes becomes U+FFFD.

/** Any character outside 7-bit ASCII (what SES takes in an address: shared/mail/, shared/config/mail.ts). */
export const NOT_ASCII = /[\u0080-\uFFFF]/;

/** An instant (ISO 8601, UTC) as people read it in a message: `2026-12-04 09:28:50 UTC`, as the console writes times. */
export const displayTime = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;

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
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/** `text` with each lone surrogate made U+FFFD, as a UTF-8 decoder makes bytes that are no character. */
const wellFormedText = (text: string) => (LONE_SURROGATE.test(text) ? text.replace(LONE_SURROGATES, '\uFFFD') : text);

/**
 * Whether JSON text escapes a lone surrogate (`\ud800` unpaired). In text decoded from UTF-8 only an escape
 * can make one, and a pair is two escapes one after the other. Each escape is read whole (`\\` too), so a
 * backslash that is itself escaped never starts one; only the backslashes are visited.
 */
export function escapesLoneSurrogate(json: string): boolean {
  // Where the escape of a high surrogate ended: the next escape must start there and be a low one.
  let highEnd = -1;
  for (let at = json.indexOf('\\'); at !== -1; at = json.indexOf('\\', at)) {
    if (highEnd !== -1 && highEnd !== at) return true;
    if (json.charCodeAt(at + 1) !== 0x75 /* u */) {
      if (highEnd !== -1) return true;
      at += 2;
      continue;
    }
    // \uD800–\uDBFF high, \uDC00–\uDFFF low: read from the first two hex digits, in either case.
    const first = json.charCodeAt(at + 2) | 0x20;
    const second = json.charCodeAt(at + 3) | 0x20;
    at += 6;
    const high = first === 0x64 /* d */ && (second === 0x38 || second === 0x39 || second === 0x61 || second === 0x62);
    const low = first === 0x64 && second >= 0x63 /* c */ && second <= 0x66 /* f */;
    if (low !== (highEnd !== -1)) return true;
    highEnd = high ? at : -1;
  }
  return highEnd !== -1;
}

/** JSON.parse (throwing as it does), each lone surrogate the text escapes made U+FFFD: JSON as it enters, Unicode text. */
export function parseJsonText(text: string): unknown {
  const value: unknown = JSON.parse(text);
  return escapesLoneSurrogate(text) ? wellFormed(value) : value;
}

/**
 * `value` (parsed JSON) with each lone surrogate in its strings and member names made U+FFFD: Unicode text,
 * which I-JSON (RFC 7493 §2.1) asks for and a UTF-8 store can hold. Changed in place; walked without
 * recursion (JSON.parse takes nesting deeper than the call stack), members defined rather than assigned
 * (a member named `__proto__` stays a member).
 */
export function wellFormed<T>(value: T): T {
  if (typeof value === 'string') return wellFormedText(value) as T;
  const pending: object[] = value !== null && typeof value === 'object' ? [value] : [];
  const define = (target: object, key: PropertyKey, item: unknown) =>
    Object.defineProperty(target, key, { value: item, writable: true, enumerable: true, configurable: true });
  while (pending.length > 0) {
    const node = pending.pop()!;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (typeof item === 'string') node[i] = wellFormedText(item);
        else if (item !== null && typeof item === 'object') pending.push(item);
      }
      continue;
    }
    const members = Object.entries(node);
    const renamed = members.some(([key]) => LONE_SURROGATE.test(key));
    // A member renamed goes last unless every member is defined again, in order.
    if (renamed) for (const [key] of members) delete (node as Record<string, unknown>)[key];
    for (const [key, item] of members) {
      if (typeof item === 'string') {
        const text = wellFormedText(item);
        if (text !== item || renamed) define(node, wellFormedText(key), text);
      } else {
        if (renamed) define(node, wellFormedText(key), item);
        if (item !== null && typeof item === 'object') pending.push(item);
      }
    }
  }
  return value;
}

/**
 * Control and format characters (bidirectional controls, zero-width space and word joiner, soft hyphen, byte-order
 * mark, tags), line or paragraph separators, and the characters Unicode says to draw as nothing
 * (Default_Ignorable_Code_Point: the Hangul fillers U+3164 and U+FFA0, the combining grapheme joiner) or that draw
 * a blank no trim takes off (U+2800, the empty Braille cell): shown, a name holding them reads as another
 * (`\u202E10-bd-dorp` as `prod-db-01`, `prod-db-01\u200B`, `prod-db-01\u2060` or `prod-db-01\u3164` as
 * `prod-db-01`, `\u3164\u3164` as nothing). Joiners (U+200C/D) and variation selectors (U+FE00–FE0F, Mongolian
 * U+180B–180D and U+180F, U+E0100–E01EF) stay: some scripts' names, and emoji, need them.
 */
const SPOOFING_CHARACTERS =
  /(?!\u200C|\u200D|[\u180B-\u180D]|\u180F|[\uFE00-\uFE0F]|[\u{E0100}-\u{E01EF}])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u2800]/u;

/** Whether a name holds a character that makes it read as another (above): such a name is refused, or not shown. */
export const spoofsAnotherName = (name: string): boolean => SPOOFING_CHARACTERS.test(name);
