// Items to and from DynamoDB's JSON, checked against the AWS SDK's own converter
// (@aws-sdk/util-dynamodb, what the document client used with the same options) on
// arbitrary records, and on what both refuse.
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromItem, toItem, type WireItem } from '../../shared/db/attributes.js';

/** The SDK's marshalled form with binary as the wire carries it (base64 text). */
function sdkWire(record: Record<string, unknown>): unknown {
  return JSON.parse(
    JSON.stringify(marshall(record, { removeUndefinedValues: true, convertClassInstanceToMap: false }), (_key, value) =>
      ArrayBuffer.isView(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') : value,
    ),
  );
}

const bytes = fc.uint8Array({ maxLength: 24 }).map((a) => new Uint8Array(a));
const leaf = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e15, max: 1e15 }),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  bytes,
);
const value = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie('value'), { maxKeys: 4 }),
  ),
})).value;
const record = fc.dictionary(fc.string({ maxLength: 8 }), value, { maxKeys: 6 });

describe('DynamoDB attributes', () => {
  it('marshal as the SDK does, and read back to the same record (undefined left out)', () => {
    fc.assert(
      fc.property(record, (r) => {
        const wire = toItem(r);
        expect(JSON.parse(JSON.stringify(wire))).toEqual(sdkWire(r));
        const back = fromItem(JSON.parse(JSON.stringify(wire)) as WireItem);
        expect(back).toEqual(unmarshall(marshall(r, { removeUndefinedValues: true }), {}));
      }),
      { numRuns: 300 },
    );
  });

  it('sets of strings, numbers and bytes', () => {
    const r = { s: new Set(['a', 'b']), n: new Set([1, 2.5]), b: new Set([new Uint8Array([1, 2])]) };
    expect(toItem(r)).toEqual({ s: { SS: ['a', 'b'] }, n: { NS: ['1', '2.5'] }, b: { BS: ['AQI='] } });
    expect(fromItem(toItem(r) as WireItem)).toEqual(r);
  });

  it('a field named __proto__ is never stored, and one read back is left out, not made a prototype', () => {
    const r = JSON.parse('{"__proto__": {"x": 1}, "n": 1}') as Record<string, unknown>;
    expect(() => toItem(r)).toThrow('A field named __proto__ is not stored');
    const back = fromItem(JSON.parse('{"__proto__": {"M": {"x": {"N": "1"}}}, "n": {"N": "1"}}') as WireItem);
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(back).toEqual({ n: 1 });
    expect((back as { x?: unknown }).x).toBeUndefined();
  });

  it('refuses what the SDK refuses: non-finite or inexact numbers, class instances, empty sets', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, -(2 ** 60), new Date(), new Set()]) {
      expect(() => marshall({ v: bad }, { removeUndefinedValues: true })).toThrow();
      expect(() => toItem({ v: bad })).toThrow(TypeError);
    }
    // Stricter than the SDK, which stores a Map as a map: nothing here stores one, and one read back would be a plain object.
    expect(() => toItem({ v: new Map([['a', 1]]) })).toThrow(TypeError);
    expect(() => fromItem({ v: { N: '9007199254740993' } })).toThrow(RangeError);
    expect(() => fromItem({ v: { B: 'not base64!' } })).toThrow('Invalid base64 string.');
    expect(() => fromItem({ v: {} })).toThrow('An attribute of no known type');
  });
});
