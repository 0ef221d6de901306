// The stored form of a cluster-day's rollups (issue 21 §1): a binary cell in the
// columns' layout. It round-trips every sound rollup exactly, copies into columns as
// the object path puts it, refuses to store a non-finite number, and reads a stored
// non-finite entry as no data, as the JSON reader of older items does.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { putItem } from '../../shared/db/client.js';
import { windowDays } from '../../shared/db/days.js';
import { putRollups, readClusterRollups, readFleetRollups, shardOf, storedDay } from '../../shared/db/metrics.js';
import { readFleetRollupColumns } from '../../shared/db/rollup-packs.js';
import { addSamples } from '../../shared/db/metrics.js';
import { METRIC_KEYS } from '../../shared/fleet/records.js';
import { CELL_BYTES, columnsFromRollups, decodeCell, emptyColumns, encodeCell, putCell, putDay } from '../../shared/fleet/rollup-columns.js';
import type { DayRollup } from '../../shared/fleet/rollup.js';
import { useTestTables } from '../support/dynamo.js';

const DAY = '2026-11-20';
const finite = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer({ min: -1000, max: 1000 }),
  fc.constantFrom(-0, Number.MAX_VALUE, -1e15),
);
const part = fc.record({
  min: finite,
  max: finite,
  sum: finite,
  count: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  last: finite,
  last_at: fc.integer({ min: 0, max: 86_399_999 }).map((ms) => new Date(Date.parse(`${DAY}T00:00:00Z`) + ms).toISOString()),
});
const dayRollup = fc.dictionary(fc.constantFrom(...METRIC_KEYS), part, { maxKeys: METRIC_KEYS.length }) as fc.Arbitrary<DayRollup>;

describe('a stored rollup cell', () => {
  it('round-trips every sound day exactly (-0 and the largest doubles included), in 736 bytes', () => {
    fc.assert(
      fc.property(dayRollup, (day) => {
        const cell = encodeCell(day);
        expect(cell.length).toBe(CELL_BYTES);
        expect(decodeCell(cell)).toEqual(day);
        expect(Object.is(decodeCell(cell).qps?.min, day.qps?.min)).toBe(true);
      }),
    );
    expect(CELL_BYTES).toBe(736);
  });

  it('copies into the columns exactly as the object path puts the same day, replacing what the cell held, at any byte offset', () => {
    fc.assert(
      fc.property(dayRollup, dayRollup, fc.integer({ min: 0, max: 7 }), (before, day, offset) => {
        const viaObjects = emptyColumns(['a', DAY], ['x', 'y']);
        const viaCell = emptyColumns(['a', DAY], ['x', 'y']);
        putDay(viaObjects, 1, 1, day);
        putDay(viaCell, 1, 1, before);
        // The bytes as the SDK hands them over: a view at some offset of a larger buffer.
        const held = new Uint8Array(CELL_BYTES + 8);
        held.set(encodeCell(day), offset);
        putCell(viaCell, 1, 1, held.subarray(offset, offset + CELL_BYTES));
        expect(viaCell.values).toEqual(viaObjects.values);
        expect(viaCell.lastAt).toEqual(viaObjects.lastAt);
      }),
    );
  });

  it('is never written with a number that is not finite', () => {
    const ok = { min: 1, max: 2, sum: 3, count: 2, last: 2, last_at: `${DAY}T01:00:00.000Z` };
    for (const bad of [{ sum: Infinity }, { min: Number.NaN }, { count: 1.5 }, { count: 0 }, { last_at: 'yesterday' }])
      expect(() => encodeCell({ qps: { ...ok, ...bad } })).toThrow(RangeError);
  });

  it('reads a stored entry with a number that is not finite as no data, the rest as stored', () => {
    const cell = encodeCell({
      qps: { min: 1, max: 2, sum: 3, count: 2, last: 2, last_at: `${DAY}T01:00:00.000Z` },
      memory_pct: { min: 50, max: 60, sum: 110, count: 2, last: 60, last_at: `${DAY}T02:00:00.000Z` },
    });
    // qps's sum slot (metric 4, slot SUM = 3) overwritten with +∞, as a corrupt or hand-made item might hold.
    const view = new DataView(cell.buffer);
    view.setFloat64(8 + (METRIC_KEYS.indexOf('qps') * 6 + 3) * 8, Number.POSITIVE_INFINITY, true);
    expect(decodeCell(cell)).toEqual({ memory_pct: { min: 50, max: 60, sum: 110, count: 2, last: 60, last_at: `${DAY}T02:00:00.000Z` } });
    // A time no Date can hold (finite, but past ±8.64e15 ms) is no data either, in the columns too.
    const farTime = encodeCell({ qps: { min: 1, max: 2, sum: 3, count: 2, last: 2, last_at: `${DAY}T01:00:00.000Z` } });
    new DataView(farTime.buffer).setFloat64(8 + (METRIC_KEYS.length * 6 + METRIC_KEYS.indexOf('qps')) * 8, 1e300, true);
    expect(decodeCell(farTime)).toEqual({});
    const columns = emptyColumns([DAY], ['x']);
    putCell(columns, 0, 0, farTime);
    expect(columns.values.every((v) => v === 0)).toBe(true);
  });

  it('refuses bytes that are not a cell of this layout', () => {
    expect(() => decodeCell(new Uint8Array(CELL_BYTES - 8))).toThrow(/736 bytes/);
    const wrongFormat = encodeCell({});
    wrongFormat[0] = 9;
    expect(() => decodeCell(wrongFormat)).toThrow(/format 9/);
  });
});

describe('rollup items in DynamoDB', () => {
  beforeAll(async () => {
    await useTestTables();
  });

  it('are written as cells and read back equal, beside an item written as JSON before cells, through items and through a refresh read', async () => {
    const days = windowDays(3);
    const [fresh, legacy] = [randomUUID(), randomUUID()];
    const metrics: DayRollup = { qps: { min: 1, max: 5, sum: 9, count: 3, last: 5, last_at: `${days[0]}T10:00:00.000Z` } };
    await putRollups([{ cluster_id: fresh, day: days[0]!, metrics }]);
    // An item as every writer stored it before issue 21's cells: the same rollups as a JSON string.
    await putItem('metrics', {
      pk: `ROLLUP#${days[0]}#${shardOf(legacy)}`,
      sk: `CLUSTER#${legacy}`,
      cluster_id: legacy,
      day: days[0],
      m: JSON.stringify(metrics),
      version: 1,
    });
    // Today's samples into both: ingest reads either form and writes a cell.
    const at = new Date().toISOString();
    await addSamples([fresh, legacy].map((cluster_id) => ({ cluster_id, metric_key: 'qps' as const, value: 7, at })));

    for (const id of [fresh, legacy]) expect((await readClusterRollups(id, [days[0]!]))[0]!.metrics).toEqual(metrics);
    const items = await readFleetRollups(days);
    const columns = await readFleetRollupColumns(days);
    const expected = columnsFromRollups(days, [...items.keys()], [...items.values()].flat());
    for (const id of [fresh, legacy]) {
      const today = items.get(id)!.find((r) => r.day === days[2]);
      expect(today?.metrics.qps).toMatchObject({ count: 1, last: 7 });
      const [row, expectedRow] = [columns.rowOf.get(id)!, expected.rowOf.get(id)!];
      for (let d = 0; d < days.length; d++) {
        const cellValues = (c: typeof columns, r: number) => c.values.slice((d * c.clusterIds.length + r) * 78, (d * c.clusterIds.length + r + 1) * 78);
        expect(cellValues(columns, row)).toEqual(cellValues(expected, expectedRow));
      }
    }
    expect(storedDay(encodeCell(metrics))).toEqual(metrics);
  });
});
