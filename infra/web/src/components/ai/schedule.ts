// The patrol's timetable as the patrol page says it (the KPIs' scheduled_every_minutes, last_scheduled_at).

/** 360 → "6 h", 90 → "90 min": the timetable as people say it. */
export const everyLabel = (minutes: number) => (minutes % 60 === 0 ? `${minutes / 60} h` : `${minutes} min`);

/**
 * Whether the timetable has missed two scans running: none started for two intervals. A tick held off by another
 * scan makes no report, so one missing proves nothing; two say the schedule or its worker is failing.
 */
export const scheduleLate = (lastScheduledAt: string | null, everyMinutes: number, now: number) =>
  lastScheduledAt !== null && now - Date.parse(lastScheduledAt) >= 2 * everyMinutes * 60_000;
