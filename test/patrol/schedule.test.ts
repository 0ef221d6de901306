// When the next scheduled patrol scan is due (shared/patrol/schedule.ts): the last one's start plus whole
// intervals, the first after now, so a tick that made no report (the lock was held) keeps the cadence.
import { describe, expect, it } from 'vitest';
import { nextScheduledScan, PATROL_EVERY_MINUTES } from '../../shared/patrol/schedule.js';
import { scheduledWorkers } from '../../shared/workers.js';

const at = (iso: string) => new Date(iso);

describe('nextScheduledScan', () => {
  it('is the last start plus one interval while that is ahead', () => {
    expect(nextScheduledScan('2026-12-05T06:00:12.000Z', at('2026-12-05T07:30:00Z'))).toBe('2026-12-05T12:00:12.000Z');
  });

  it('skips the ticks that made no report, keeping the cadence', () => {
    expect(nextScheduledScan('2026-12-05T06:00:12.000Z', at('2026-12-05T13:00:00Z'))).toBe('2026-12-05T18:00:12.000Z');
    expect(nextScheduledScan('2026-12-05T06:00:12.000Z', at('2026-12-05T12:00:12.000Z'))).toBe('2026-12-05T18:00:12.000Z');
  });

  it('is null before any scheduled scan, and follows another interval', () => {
    expect(nextScheduledScan(null, at('2026-12-05T07:30:00Z'))).toBeNull();
    expect(nextScheduledScan('2026-12-05T06:00:00.000Z', at('2026-12-05T06:20:00Z'), 15)).toBe('2026-12-05T06:30:00.000Z');
  });

  it('is the timetable the patrol worker is scheduled on', () => {
    expect(scheduledWorkers().find((w) => w.name === 'patrol-worker')?.schedule.everyMinutes).toBe(PATROL_EVERY_MINUTES);
  });
});
