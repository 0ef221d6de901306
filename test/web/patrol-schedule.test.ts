// The patrol page's timetable words (infra/web/src/components/ai/schedule.ts).
import { describe, expect, it } from 'vitest';
import { everyLabel, scheduleLate } from '../../infra/web/src/components/ai/schedule.js';

describe('the patrol timetable', () => {
  it('says an interval in hours when it is whole hours, else in minutes', () => {
    expect([everyLabel(360), everyLabel(60), everyLabel(90), everyLabel(15)]).toEqual(['6 h', '1 h', '90 min', '15 min']);
  });

  it('is late once two intervals pass without a scheduled scan: one missing is a tick another scan held off', () => {
    const last = '2026-12-05T06:00:00.000Z';
    const hours = (h: number) => Date.parse(last) + h * 3_600_000;
    expect(scheduleLate(last, 360, hours(6.5))).toBe(false);
    expect(scheduleLate(last, 360, hours(11.9))).toBe(false);
    expect(scheduleLate(last, 360, hours(12))).toBe(true);
    expect(scheduleLate(null, 360, hours(48))).toBe(false);
  });
});
