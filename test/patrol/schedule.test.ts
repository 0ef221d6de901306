// When the next scheduled patrol scan is due (shared/patrol/schedule.ts): the last one's start plus whole
// intervals, the first after now, so a tick that made no report (the lock was held) keeps the cadence.
import { describe, expect, it } from 'vitest';
import { nextScheduledScan, observedEveryMinutes, PATROL_EVERY_MINUTES } from '../../shared/patrol/schedule.js';
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

describe('observedEveryMinutes', () => {
  const starts = (first: string, gapsMinutes: number[]) => {
    const times = [Date.parse(first)];
    for (const gap of gapsMinutes) times.push(times.at(-1)! - gap * 60_000);
    return times.map((t) => new Date(t).toISOString());
  };

  it('is the declared interval until the timer has started four scans', () => {
    expect(observedEveryMinutes([])).toBe(PATROL_EVERY_MINUTES);
    expect(observedEveryMinutes(starts('2026-12-05T12:00:00Z', [1, 1]))).toBe(PATROL_EVERY_MINUTES);
  });

  it('follows a timetable moved off the declared one: a daily cron, a demo every minute', () => {
    expect(observedEveryMinutes(starts('2026-12-05T06:00:04Z', [1440, 1440.1, 1439.9]))).toBe(1440);
    expect(observedEveryMinutes(starts('2026-12-05T06:00:04Z', [1, 1, 1, 1]))).toBe(1);
  });

  it('is not moved by a retried scan a minute after its tick, nor by a tick another scan held off', () => {
    // The retried scan's gap and the one after it make one interval: the median is the longer, a minute or so short.
    expect(observedEveryMinutes(starts('2026-12-05T18:00:00Z', [360, 1.5, 358.5, 720, 360, 360]))).toBe(359);
    expect(observedEveryMinutes(starts('2026-12-05T18:00:00Z', [360, 720, 360]))).toBe(360);
  });

  it('follows a change of timetable within two of its scans, whatever the month held before', () => {
    const demoMinutes = Array(500).fill(1);
    expect(observedEveryMinutes(starts('2026-12-05T18:00:00Z', [360, 360, 7, ...demoMinutes]))).toBe(360);
  });
});
