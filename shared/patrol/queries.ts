// Reading patrol reports (spec §4 Patrol): the list, the latest with its parsed
// fields, the 30-day KPIs, one report.
import { getReport, listReportsSince, type PatrolReport } from '../db/patrol.js';
import { NotFound } from '../http/errors.js';
import { settled } from './lock.js';
import type { PatrolReportSummary } from './schemas.js';

export const SOURCE = 'live' as const; // spec §1: data computed from live data
const DAY_MS = 86_400_000;

const listItem = (r: PatrolReport): PatrolReportSummary => ({
  report_id: r.report_id,
  created_at: r.created_at,
  report_type: r.report_type,
  status: r.status,
  fleet_narrative: r.fleet_narrative,
  flagged_count: r.flagged_count,
  model: r.model,
  cost_usd: r.cost_usd,
  total_tokens: r.total_tokens,
  duration_seconds: r.duration_seconds,
  triggered_by: r.triggered_by,
  error: r.error,
});

export async function listReports(q: { days: number; page: number; page_size: number }, now = new Date()) {
  const reports = await Promise.all((await listReportsSince(new Date(now.getTime() - q.days * DAY_MS))).map((r) => settled(r)));
  const start = (q.page - 1) * q.page_size;
  return {
    reports: reports.slice(start, start + q.page_size).map(listItem),
    total: reports.length,
    page: q.page,
    page_size: q.page_size,
    source: SOURCE,
    generated_at: now.toISOString(),
  };
}

/** The most recent completed report, with the parsed fields. */
export async function latestReport() {
  for (const days of [30, 365]) {
    const latest = (await listReportsSince(new Date(Date.now() - days * DAY_MS))).find((r) => r.status === 'completed');
    if (latest) return latest;
  }
  throw new NotFound('No completed patrol report yet: trigger one with POST /api/patrol/trigger.');
}

/**
 * The last 30 days: reports, duration and latest count completed reports;
 * tokens and cost count every finished one, since a scan that failed after
 * LLM calls was charged for them (shared/patrol/README.md).
 */
export async function patrolKpis(now = new Date()) {
  const finished = (await listReportsSince(new Date(now.getTime() - 30 * DAY_MS))).filter((r) => r.status !== 'running');
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
    source: SOURCE,
    generated_at: now.toISOString(),
  };
}

export async function reportDetail(reportId: string) {
  const report = await getReport(reportId);
  if (!report) throw new NotFound(`No patrol report ${reportId}.`);
  return settled(report);
}
