// Patrol reports (table `patrol`).
//   pk = REPORT#<report_id>, sk = REPORT
//   gsi1: gsi1pk = REPORTS, gsi1sk = <created_at>#<report_id> (newest first by Query)
import { randomUUID } from 'node:crypto';
import { ReportStatus, type CustomerSummary, type FlaggedCluster, type FleetSummary, type PatrolReport, type PatrolReportSummary } from '../patrol/schemas.js';
import { ConditionFailed, conditionalWrite, getItem, putItem, queryTimeIndex, setFields, updateItem } from './client.js';
import { ttlAfterDays } from './tables.js';
import { itemReader, listOf, nullable, number, oneOf, pickFields, record, string, type Fields } from './items.js';

const REPORT_STATUSES = ReportStatus.options;
export type { CustomerSummary, FlaggedCluster, FleetSummary, PatrolReport };

const key = (id: string) => ({ pk: `REPORT#${id}`, sk: 'REPORT' });
/** What a list shows of a report (its projection): no parsed lists. */
const summaryFields: Fields<PatrolReportSummary> = {
  report_id: string,
  created_at: string,
  report_type: string,
  status: oneOf(REPORT_STATUSES),
  triggered_by: string,
  model: string,
  total_tokens: number,
  cost_usd: number,
  duration_seconds: number,
  fleet_narrative: string,
  flagged_count: number,
  error: nullable(string),
};
const SUMMARY_FIELDS = Object.keys(summaryFields);
const readSummary = itemReader(summaryFields);
/**
 * What the list's total, the KPIs and the latest's lookup read of every report in a window: no
 * text. A report's flagged clusters and customer summaries run to tens of kilobytes; a scan every
 * 6 hours is 120 reports a month, 1,460 in the list's widest window.
 */
const FIGURE_FIELDS = ['report_id', 'created_at', 'status', 'report_type', 'triggered_by', 'total_tokens', 'cost_usd', 'duration_seconds'] as const;
export type ReportFigures = Pick<PatrolReportSummary, (typeof FIGURE_FIELDS)[number]>;
const readFigures = itemReader(pickFields(summaryFields, FIGURE_FIELDS));
const readReport = itemReader<PatrolReport>({
  ...summaryFields,
  input_tokens: number,
  output_tokens: number,
  tool_rounds: number,
  fleet_summary_parsed: nullable(record<FleetSummary>({ total_clusters: number, critical: number, warning: number, healthy: number, headline: string })),
  clusters_flagged_parsed: listOf(
    record<FlaggedCluster>({
      cluster_id: string,
      cluster_name: string,
      customer_name: string,
      severity: oneOf(['Critical', 'Warning']),
      reason: string,
      recommended_action: string,
    }),
  ),
  customer_summaries_parsed: listOf(record<CustomerSummary>({ customer_name: string, clusters: number, flagged: number, summary: string })),
  finished_at: nullable(string),
});

/** A new report, `running`; fails (ConditionFailed) if the id exists. */
export async function createReport(report: Pick<PatrolReport, 'report_id' | 'report_type' | 'triggered_by'>, now = new Date()): Promise<PatrolReport> {
  const record: PatrolReport = {
    ...report,
    created_at: now.toISOString(),
    status: 'running',
    model: '',
    input_tokens: 0,
    output_tokens: 0,
    total_tokens: 0,
    cost_usd: 0,
    duration_seconds: 0,
    tool_rounds: 0,
    fleet_narrative: '',
    flagged_count: 0,
    fleet_summary_parsed: null,
    clusters_flagged_parsed: [],
    customer_summaries_parsed: [],
    error: null,
    finished_at: null,
  };
  await putItem(
    'patrol',
    {
      ...key(report.report_id),
      gsi1pk: 'REPORTS',
      gsi1sk: `${record.created_at}#${report.report_id}`,
      ...record,
      ttl: ttlAfterDays(now), // read 365 days back at most; removed a little after
    },
    {
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  );
  return record;
}

/** Finishes a running report (completed or failed); ConditionFailed when another write finished it first. */
export async function finishReport(reportId: string, fields: Partial<PatrolReport> & { status: 'completed' | 'failed' }, now = new Date()): Promise<void> {
  // A token only this write stores (kept on the item, read by nobody else): a retry whose first try
  // landed but lost its answer meets its own write, which is this write done, not someone else's.
  const token = randomUUID();
  const set = setFields({ ...fields, finished_at: now.toISOString(), finish_token: token });
  const { written } = await conditionalWrite(
    'patrol',
    key(reportId),
    () =>
      updateItem('patrol', key(reportId), {
        UpdateExpression: set.set,
        ConditionExpression: '#status = :running',
        ExpressionAttributeNames: { ...set.names, '#status': 'status' },
        ExpressionAttributeValues: { ...set.values, ':running': 'running' },
        ReturnValues: 'NONE',
      }),
    (item) => item.finish_token === token,
  );
  if (!written) throw new ConditionFailed([0]);
}

/** What a scan spent on its model calls. */
export type ReportSpend = Pick<PatrolReport, 'model' | 'input_tokens' | 'output_tokens' | 'total_tokens' | 'cost_usd'>;

/**
 * Records what the worker `workerId` spent on a report that someone else marked failed meanwhile (a
 * reader or the next scan found its lease lapsed), so its own finishing write was refused: the calls
 * were paid for, and the KPIs count every finished report's tokens and cost. The figures are the
 * scan's totals, set (not added), so a retried write counts them once. ConditionFailed unless the
 * report is failed and that worker's.
 */
export async function recordReportSpend(reportId: string, workerId: string, spend: ReportSpend): Promise<void> {
  const set = setFields({ ...spend });
  await updateItem('patrol', key(reportId), {
    UpdateExpression: set.set,
    ConditionExpression: '#status = :failed AND worker_id = :me',
    ExpressionAttributeNames: { ...set.names, '#status': 'status' },
    ExpressionAttributeValues: { ...set.values, ':failed': 'failed', ':me': workerId },
    ReturnValues: 'NONE',
  });
}

/**
 * The worker that will produce the report: claimed once, so a repeated
 * asynchronous delivery of the same event cannot start a second scan of it
 * (ConditionFailed). A claim whose answer was lost and whose retry met it is
 * still this worker's (`workerId` is fresh per delivery).
 */
export async function claimReport(reportId: string, workerId: string): Promise<void> {
  const { written } = await conditionalWrite(
    'patrol',
    key(reportId),
    () =>
      updateItem('patrol', key(reportId), {
        UpdateExpression: 'SET worker_id = :me',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(worker_id) AND #status = :running',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':me': workerId, ':running': 'running' },
        ReturnValues: 'NONE',
      }),
    (item) => item.worker_id === workerId && item.status === 'running',
  );
  if (!written) throw new ConditionFailed([0]);
}

export async function getReport(reportId: string): Promise<PatrolReport | undefined> {
  const item = await getItem('patrol', key(reportId), true);
  return item ? readReport(item) : undefined;
}

/** The figures of the reports created at or after `since`, newest first (one index range). */
export async function listReportFiguresSince(since: Date): Promise<ReportFigures[]> {
  return (await queryTimeIndex('patrol', 'REPORTS', { since }, FIGURE_FIELDS)).map(readFigures);
}

/**
 * What a list shows of a page of reports (as listReportFiguresSince names them, newest first):
 * the index range from the page's oldest to its newest, which holds only them.
 */
export async function reportSummaries(page: readonly ReportFigures[]): Promise<PatrolReportSummary[]> {
  const newest = page[0];
  const oldest = page.at(-1);
  if (!newest || !oldest) return [];
  const range = { from: `${oldest.created_at}#${oldest.report_id}`, to: `${newest.created_at}#${newest.report_id}` };
  const found = new Map((await queryTimeIndex('patrol', 'REPORTS', range, SUMMARY_FIELDS)).map((item) => [item.report_id, readSummary(item)]));
  return page.flatMap((r) => found.get(r.report_id) ?? []);
}
