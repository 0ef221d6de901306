// How often the scheduled patrol scan runs: the stack's EventBridge rate and `npm start`'s timetable
// (shared/workers.ts), and the next scan the KPIs announce. A module of its own, so the patrol route group
// reads the figure without the workers' declarations. The console bundles it (SCHEDULE_TRIGGER): it imports
// nothing, and must not, or server code would go to the browser.

/**
 * Who a scan the timer started names as its trigger (a person's scan names its username). The timetable follows these
 * scans only: a person may label a scan `scheduled` too, and pressing a button must not move the announced timetable.
 * It holds a space, which no username can (shared/auth/username.ts), so no person's scan can pass for the timer's.
 */
export const SCHEDULE_TRIGGER = 'the schedule';

/** What the timer was named before it held a space: reports stored then are the timer's too, when shown. */
const LEGACY_SCHEDULE_TRIGGER = 'schedule';

/** Whether a report's `triggered_by` is the timer, as the console shows it: by either name, or none. */
export const isTimerTrigger = (triggeredBy: string | null | undefined) =>
  !triggeredBy || triggeredBy === SCHEDULE_TRIGGER || triggeredBy === LEGACY_SCHEDULE_TRIGGER;

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

/**
 * The interval the timer has actually kept, in whole minutes (at least 1): the median of the gaps between the starts
 * of its newest four scans (newest first, as the KPIs read them). The declared one until there are four: a timetable
 * moved off the declared one (`npm start`'s LOCAL_PATROL_WORKER_EVERY_SECONDS, the stack's `patrolSchedule`, a daily
 * cron for less LLM cost) was announced as every 6 h. The median, not the shortest gap: Lambda's retry of a crashed
 * scan starts a second one a minute after the first, and a tick another scan held off makes one gap twice as long.
 * The newest only: a change of timetable is followed within two of its scans, not once the month has forgotten the old.
 */
export function observedEveryMinutes(timerStartsNewestFirst: readonly string[], declared = PATROL_EVERY_MINUTES): number {
  const newest = timerStartsNewestFirst.slice(0, 4);
  if (newest.length < 4) return declared;
  const gaps = newest
    .slice(1)
    .map((start, i) => Date.parse(newest[i]!) - Date.parse(start))
    .sort((a, b) => a - b);
  return Math.max(1, Math.round(gaps[1]! / 60_000));
}
