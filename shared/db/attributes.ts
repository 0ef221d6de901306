// Items between JavaScript and DynamoDB's JSON wire format (`{ "n": { "N": "3" } }`), as the
// SDK's document client converts them with the options this service always used
// (`removeUndefinedValues`, no class instances, numbers only when exact): strings, finite
// numbers within ±2^53, booleans, null, byte arrays (binary, base64 on the wire), arrays,
// plain objects, and sets of strings, numbers or bytes. Anything else is refused before a
// request is sent, as the SDK refused it.

/** An attribute as DynamoDB's JSON wire format holds it: one type key, binary as base64 text. */
export interface WireAttribute {
  S?: string;
  N?: string;
  B?: string;
  BOOL?: boolean;
  NULL?: boolean;
  L?: WireAttribute[];
  M?: Record<string, WireAttribute>;
  SS?: string[];
  NS?: string[];
  BS?: string[];
}
export type WireItem = Record<string, WireAttribute>;

const base64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

function numberText(value: number): string {
  if (!Number.isFinite(value)) throw new TypeError(`Special numeric value ${value} is not allowed`);
  if (value > Number.MAX_SAFE_INTEGER || value < Number.MIN_SAFE_INTEGER)
    throw new TypeError(`Number ${value} is outside ±Number.MAX_SAFE_INTEGER: it would not be stored exactly`);
  return String(value);
}

const isPlainObject = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/** One value as a wire attribute; undefined for `undefined` (left out of its map or list). */
export function toAttribute(value: unknown): WireAttribute | undefined {
  switch (typeof value) {
    case 'undefined':
      return undefined;
    case 'string':
      return { S: value };
    case 'number':
      return { N: numberText(value) };
    case 'boolean':
      return { BOOL: value };
    case 'object': {
      if (value === null) return { NULL: true };
      if (value instanceof Uint8Array) return { B: base64(value) };
      if (Array.isArray(value)) return { L: value.flatMap((v) => toAttribute(v) ?? []) };
      if (value instanceof Set) return setAttribute(value);
      if (isPlainObject(value)) return { M: toItem(value as Record<string, unknown>) };
      throw new TypeError(`Unsupported type passed: ${Object.prototype.toString.call(value)} (only plain objects, arrays, sets and byte arrays are stored)`);
    }
    default:
      throw new TypeError(`Unsupported type passed: ${typeof value}`);
  }
}

function setAttribute(set: Set<unknown>): WireAttribute {
  const values = [...set].filter((v) => v !== undefined);
  if (values.length === 0) throw new TypeError('An empty set cannot be stored');
  if (values.every((v) => typeof v === 'string')) return { SS: values as string[] };
  if (values.every((v) => typeof v === 'number')) return { NS: (values as number[]).map(numberText) };
  if (values.every((v) => v instanceof Uint8Array)) return { BS: (values as Uint8Array[]).map(base64) };
  throw new TypeError('A set must hold only strings, only numbers or only byte arrays');
}

/** A record as a wire item (or map): its `undefined` fields left out. */
export function toItem(record: Record<string, unknown>): WireItem {
  const item: WireItem = {};
  for (const [name, value] of Object.entries(record)) {
    // A record read back is copied and spread: a field by that name would become its copies' prototype.
    if (name === '__proto__') throw new TypeError('A field named __proto__ is not stored');
    const attribute = toAttribute(value);
    if (attribute) item[name] = attribute;
  }
  return item;
}

function fromNumber(text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || Math.abs(value) > Number.MAX_SAFE_INTEGER) throw new RangeError(`Value ${text} can't be converted to a number exactly`);
  return value;
}

/** One wire attribute as a value: binary as a Uint8Array, sets as Sets. */
export function fromAttribute(attribute: WireAttribute): unknown {
  if (attribute.S !== undefined) return attribute.S;
  if (attribute.N !== undefined) return fromNumber(attribute.N);
  if (attribute.B !== undefined) return base64Decoder(attribute.B);
  if (attribute.BOOL !== undefined) return attribute.BOOL;
  if (attribute.NULL !== undefined) return null;
  if (attribute.L !== undefined) return attribute.L.map(fromAttribute);
  if (attribute.M !== undefined) return fromItem(attribute.M);
  if (attribute.SS !== undefined) return new Set(attribute.SS);
  if (attribute.NS !== undefined) return new Set(attribute.NS.map(fromNumber));
  if (attribute.BS !== undefined) return new Set(attribute.BS.map((text) => base64Decoder(text)));
  throw new TypeError(`An attribute of no known type: ${Object.keys(attribute).join(', ') || '(empty)'}`);
}

/** A wire item (or map) as a record. */
export function fromItem(item: WireItem): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  // One named __proto__ (never written here) is left out, not made the record's prototype.
  for (const [name, attribute] of Object.entries(item)) if (name !== '__proto__') record[name] = fromAttribute(attribute);
  return record;
}

/**
 * Binary attributes decoded by Node alone, checked whole. DynamoDB itself encoded them, but a
 * string Node cannot decode whole (a character outside base64, padding in the wrong place) is
 * still refused: Node skips what it cannot decode, so the length it gives differs. It accepts
 * exactly what the SDK's decoder accepts (test/db/base64.test.ts), without that decoder's
 * regular expression over every character (≈ 60 ms of a 10,000-cluster refresh).
 * With `scratch` large enough, the bytes are decoded into it and the answer is a view of it,
 * good until the next decode into it: a reader of thousands of cells it copies at once
 * (rollup-packs.ts) allocates none (Node's pool takes a new 8 KB buffer every ten cells).
 */
export function base64Decoder(input: string, scratch?: Buffer): Uint8Array {
  const padding = input.endsWith('==') ? 2 : input.endsWith('=') ? 1 : 0;
  // Node also takes base64url's - and _, which base64 has not.
  if (input.length % 4 !== 0 || input.includes('-') || input.includes('_')) throw new TypeError('Invalid base64 string.');
  // What Buffer.from would allocate for it (its byteLength for base64), so the same bytes are written.
  const expected = (input.length / 4) * 3 - padding;
  const bytes = scratch && scratch.length >= expected ? scratch.subarray(0, scratch.write(input, 0, expected, 'base64')) : Buffer.from(input, 'base64');
  if (bytes.length !== expected) throw new TypeError('Invalid base64 string.');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}
