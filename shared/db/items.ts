// Stored items → records. A repository declares, for every field of its record
// type, how that field is read from an item (`fields`): the compiler checks the
// declaration names each field of the record with a reader of the field's type,
// so the record a repository returns is tied to its type without a cast. The
// readers check each value's kind (string, number, member of an enum, …) as
// they copy it, and fill what older items may lack with the value the type
// allows (null, a default): an item that does not fit is a MalformedItem naming
// its key and field, never a record that lies about its type. Copying only the
// declared fields also leaves the keys (pk, sk, index keys, ttl) behind.
//
// Cheap on purpose, for the hot reads (the issues list reads thousands of
// summaries per request): a typeof or a short list lookup per field, nothing
// allocated but the record and its lists and maps. A zod parse of the same
// shape costs about twice as much and more (shared/db/README.md).

/** Reads one attribute of an item: the value as the field's type, or throws (`fail`). */
export interface Field<T> {
  (value: unknown): T;
  /**
   * Never set: it makes Field invariant, so a reader's type must be its field's
   * type exactly (an enum's reader lists every member; a nullable field needs
   * `nullable`), not merely fit inside it.
   */
  readonly exactly?: (value: T) => void;
}

/** Every field of the record `T`, each with its reader. */
export type Fields<T> = { readonly [K in keyof T]-?: Field<T[K]> };

/** A stored item that does not have its record's shape: which item, which field, what was there. */
export class MalformedItem extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedItem';
  }
}

/** Raised by a reader; `record` prefixes the field's name, `itemReader` the item's key. */
class FieldMismatch extends Error {
  constructor(
    readonly path: string,
    readonly expected: string,
    readonly got: unknown,
  ) {
    super(`${path}: expected ${expected}`);
  }
}

function fail(expected: string, got: unknown): never {
  throw new FieldMismatch('', expected, got);
}

/** A reader's error, its path prefixed with where the reader ran (`.name`, `[3]`). */
function within(step: string, error: unknown): unknown {
  return error instanceof FieldMismatch ? new FieldMismatch(step + error.path, error.expected, error.got) : error;
}

const shown = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : typeof value;

/** A map (an object that is not a list or null): what a stored map attribute or a parsed JSON object is. */
export const isMap = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export const string: Field<string> = (v) => (typeof v === 'string' ? v : fail('a string', v));
export const number: Field<number> = (v) => (typeof v === 'number' ? v : fail('a number', v));
export const boolean: Field<boolean> = (v) => (typeof v === 'boolean' ? v : fail('a boolean', v));

/** One of `values` (an enum's list, e.g. a zod enum's `.options`). */
export function oneOf<const V extends string>(values: readonly V[]): Field<V> {
  const expected = `one of ${values.join(', ')}`;
  return (v) => values.find((x) => x === v) ?? fail(expected, v);
}

/** `null` for null or an absent attribute, else the value read by `read`. */
export const nullable =
  <T>(read: Field<T>): Field<T | null> =>
  (v) =>
    v === null || v === undefined ? null : read(v);

/** `undefined` for an absent attribute (an optional field), else the value read by `read`. */
export const optional =
  <T>(read: Field<T>): Field<T | undefined> =>
  (v) =>
    v === undefined ? undefined : read(v);

/** `fallback` for null or an absent attribute (a field older items lack), else the value read by `read`. */
export const orElse =
  <T>(read: Field<T>, fallback: T): Field<T> =>
  (v) =>
    v === null || v === undefined ? fallback : read(v);

export function listOf<T>(read: Field<T>): Field<T[]> {
  return (v) => {
    if (!Array.isArray(v)) return fail('a list', v);
    let i = 0;
    try {
      const out: T[] = [];
      for (; i < v.length; i++) out.push(read(v[i]));
      return out;
    } catch (error) {
      throw within(`[${i}]`, error);
    }
  };
}

/** A map whose every value `read` reads (labels, annotations). */
export function mapOf<T>(read: Field<T>): Field<Record<string, T>> {
  return (v) => {
    if (!isMap(v)) return fail('a map', v);
    const out: Record<string, T> = {};
    let at = '';
    try {
      for (const key in v) {
        at = key;
        out[key] = read(v[key]);
      }
    } catch (error) {
      throw within(`.${at}`, error);
    }
    return out;
  };
}

/** A map of anything (free-form details), as stored. */
export const anyMap: Field<Record<string, unknown>> = (v) => (isMap(v) ? v : fail('a map', v));

/** A nested map with the record shape `fields` (only its fields are copied). */
export function record<T>(fields: Fields<T>): Field<T> {
  const names = Object.keys(fields) as (keyof T & string)[];
  const readers = names.map((name) => fields[name]);
  return (v) => {
    if (!isMap(v)) return fail('a map', v);
    const out: Partial<T> = {};
    let i = 0;
    try {
      for (; i < names.length; i++) out[names[i]!] = readers[i]!(v[names[i]!]);
    } catch (error) {
      throw within(`.${names[i]}`, error);
    }
    // Fields<T> names every key of T, and each was set above with its reader's value.
    return out as T;
  };
}

/** Some of a record's fields: what a projection of those attributes reads. */
export function pickFields<T, K extends keyof T>(fields: Fields<T>, keys: readonly K[]): Fields<Pick<T, K>> {
  return Object.fromEntries(keys.map((k) => [k, fields[k]])) as unknown as Fields<Pick<T, K>>;
}

/**
 * The mapper of a repository's items: reads the record `fields` declares,
 * throwing MalformedItem (with the item's pk/sk) when the item does not fit.
 */
export function itemReader<T>(fields: Fields<T>): (item: Record<string, unknown>) => T {
  const read = record(fields);
  return (item) => {
    try {
      return read(item);
    } catch (error) {
      if (!(error instanceof FieldMismatch)) throw error;
      throw new MalformedItem(
        `stored item ${String(item.pk)} / ${String(item.sk)}: ${error.path.slice(1) || '(the item)'} should be ${error.expected}, is ${shown(error.got)}`,
      );
    }
  };
}
