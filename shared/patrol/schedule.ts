// How often the scheduled patrol scan runs: the stack's EventBridge rate and `npm start`'s timetable
// (shared/workers.ts), and the next scan the KPIs announce. A module of its own, so the patrol route group
// reads the figure without the workers' declarations.

/**
 * Who a scan the timer started names as its trigger (a person's scan names its username). The timetable follows these
 * scans only: a person may label a scan `scheduled` too, and pressing a button must not move the announced timetable.
 * It holds a space, which no username can (shared/auth/username.ts), so no person's scan can pass for the timer's.
 */
export const SCHEDULE_TRIGGER = 'the schedule';

/** Every six hours: 120 reports a month. */
export const PATROL_EVERY_MINUTES = 360;

/**
 * When the next scheduled scan is due: the last one's start plus whole intervals, the first after `now`. A rate
 * schedule keeps its cadence whatever happens to one run (a tick skipped while another scan held the lock makes
 * no report, so the first after `now` skips it too). Null before any scheduled scan.
 */
export function nextScheduledScan(lastScheduledAt: string | null, now: Date, everyMinutes = PATROL_EVERY_MINUTES): string | null {
  if (!lastScheduledAt) return null;
  const last = Date.parse(lastScheduledAt);
  const every = everyMinutes * 60_000;
  const ticks = Math.max(1, Math.floor((now.getTime() - last) / every) + 1);
  return new Date(last + ticks * every).toISOString();
}
