// Reading patrol reports (spec §4 Patrol): the list, the latest with its parsed
// fields, the 30-day KPIs, one report.
import { getReport, listReportFiguresSince, reportSummaries } from '../db/patrol.js';
import { NotFound } from '../http/errors.js';
import { settled } from './lock.js';
import { nextScheduledScan, observedEveryMinutes, SCHEDULE_TRIGGER } from './schedule.js';

export const SOURCE = 'live' as const; // spec §1: data computed from live data
const DAY_MS = 86_400_000;

/** A page of the window's reports: every report's figures counted, only the page's read as the list shows them. */
export async function listReports(q: { days: number; page: number; page_size: number }, now = new Date()) {
  const figures = await listReportFiguresSince(new Date(now.getTime() - q.days * DAY_MS));
  const start = (q.page - 1) * q.page_size;
  const page = await reportSummaries(figures.slice(start, start + q.page_size));
  return {
    reports: await Promise.all(page.map((r) => settled(r))),
    total: figures.length,
    page: q.page,
    page_size: q.page_size,
    source: SOURCE,
    generated_at: now.toISOString(),
  };
}

/** The most recent completed report, with the parsed fields. */
export async function latestReport() {
  for (const days of [30, 365]) {
    const latest = (await listReportFiguresSince(new Date(Date.now() - days * DAY_MS))).find((r) => r.status === 'completed');
    const report = latest && (await getReport(latest.report_id));
    if (report) return report;
  }
  throw new NotFound('No completed patrol report yet: trigger one with POST /api/patrol/trigger.');
}

/**
 * The last 30 days: reports, duration and latest count completed reports;
 * tokens and cost count every finished one, since a scan that failed after
 * LLM calls was charged for them (shared/patrol/README.md).
 */
export async function patrolKpis(now = new Date()) {
  const figures = await listReportFiguresSince(new Date(now.getTime() - 30 * DAY_MS));
  const finished = figures.filter((r) => r.status !== 'running');
  // Newest first: the last scan the timer started, running or ended, is where the timetable stands.
  const timerStarts = figures.filter((r) => r.report_type === 'scheduled' && r.triggered_by === SCHEDULE_TRIGGER).map((r) => r.created_at);
  const lastScheduled = timerStarts[0] ?? null;
  const everyMinutes = observedEveryMinutes(timerStarts);
  const reports = finished.filter((r) => r.status === 'completed');
  const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places;
  return {
    total_reports: reports.length,
    total_tokens: finished.reduce((s, r) => s + (r.total_tokens ?? 0), 0),
    avg_duration_s: reports.length ? round(reports.reduce((s, r) => s + r.duration_seconds, 0) / reports.length, 2) : 0,
    total_cost_usd: round(
      finished.reduce((s, r) => s + (r.cost_usd ?? 0), 0),
      6,
    ),
    latest_report_at: reports[0]?.created_at ?? null,
    // Beyond the contract: the timetable (shared/patrol/README.md, "When the next scan runs").
    scheduled_every_minutes: everyMinutes,
    last_scheduled_at: lastScheduled,
    next_scheduled_at: nextScheduledScan(lastScheduled, now, everyMinutes),
    source: SOURCE,
    generated_at: now.toISOString(),
  };
}

export async function reportDetail(reportId: string) {
  const report = await getReport(reportId);
  if (!report) throw new NotFound(`No patrol report ${reportId}.`);
  return settled(report);
}
