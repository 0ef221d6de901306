// A patrol report rendered: its status and figures, the fleet summary and
// narrative (Markdown, sanitised), the flagged clusters (severity, reason and the
// recommended action, each linking to its cluster page) and the customer
// summaries. Used by the patrol page (the latest report) and the report page.
import { useId } from 'react';
import { Link } from 'react-router';
import type { Answer } from '../../api/types';
import { Severity, When } from '../issues/format';
import { Markdown } from '../markdown';
import { ScrollRegion } from '../scroll-region';
import { Empty } from '../states';
import { count, seconds, usd } from './kpis';
import './ai.css';
import { isTimerTrigger, SCHEDULE_TRIGGER } from '../../../../../shared/patrol/schedule.js';

export type PatrolReport = Answer<'patrol', 'get'>;

export function ReportStatus({ status }: { status: string }) {
  const cls = status === 'completed' ? 'healthy' : status === 'failed' ? 'critical' : 'warning';
  return <span className={`badge ${cls}`}>{status}</span>;
}

/** A report records its model ('rules' for the rules engine) when its scan starts working; until then, or if it never did, none. */
export const modelLabel = (model: string) => (model === 'rules' ? 'rules engine' : model || 'model not recorded');

export function PatrolReportView({ report, headingLevel = 2 }: { report: PatrolReport; headingLevel?: 2 | 3 }) {
  return (
    <div className="patrol-report">
      <p className="patrol-meta">
        <ReportStatus status={report.status} /> <span className="muted">{report.report_type.replace('_', '-')}</span> · created <When iso={report.created_at} />
        {report.finished_at && (
          <>
            {' '}
            · finished <When iso={report.finished_at} />
          </>
        )}{' '}
        · by {isTimerTrigger(report.triggered_by) ? SCHEDULE_TRIGGER : report.triggered_by} · {modelLabel(report.model)}
      </p>
      {report.status === 'failed' && (
        <div className="state problem" role="alert">
          <strong>The scan failed</strong>
          <p>{report.error ?? 'No reason was recorded.'}</p>
        </div>
      )}
      {report.status === 'running' ? (
        // A running report has no figures or findings yet (it gets them when it ends): zeros and "No cluster was flagged" would read as a finished, quiet scan.
        <p className="notice" role="status">
          This scan is still running; its figures, narrative, flagged clusters and customer summaries appear here when it ends.
        </p>
      ) : (
        <PatrolReportBody report={report} headingLevel={headingLevel} />
      )}
    </div>
  );
}

function PatrolReportBody({ report, headingLevel }: { report: PatrolReport; headingLevel: 2 | 3 }) {
  const id = useId();
  const H = headingLevel === 2 ? 'h2' : 'h3';
  const Sub = headingLevel === 2 ? 'h3' : 'h4';
  const summary = report.fleet_summary_parsed;
  const flagged = [...report.clusters_flagged_parsed].sort((a, b) => (a.severity === b.severity ? 0 : a.severity === 'Critical' ? -1 : 1));
  // A failed scan wrote no findings: its empty sections say why, where "No cluster was flagged" would read as an all-clear.
  const failed = report.status === 'failed';
  return (
    <>
      <dl className="facts patrol-figures">
        <dt>Flagged clusters</dt>
        <dd>{count(report.flagged_count)}</dd>
        <dt>Duration</dt>
        <dd>{seconds(report.duration_seconds)}</dd>
        <dt>Tool rounds</dt>
        <dd>{count(report.tool_rounds)}</dd>
        <dt>Tokens</dt>
        <dd>
          {count(report.total_tokens)} ({count(report.input_tokens)} in, {count(report.output_tokens)} out)
        </dd>
        <dt>Cost</dt>
        <dd>{usd(report.cost_usd)}</dd>
      </dl>

      <section aria-labelledby={`${id}-fleet`} className="patrol-section">
        <H id={`${id}-fleet`}>Fleet</H>
        {summary && (
          <>
            {summary.headline && <p className="patrol-headline">{summary.headline}</p>}
            <ul className="tiles ai-kpis patrol-summary-tiles">
              <li className="tile">
                <div className="value">{count(summary.total_clusters)}</div>
                <div className="label">Clusters</div>
              </li>
              <li className="tile">
                <div className="value critical-text">{count(summary.critical)}</div>
                <div className="label">Critical</div>
              </li>
              <li className="tile">
                <div className="value warning-text">{count(summary.warning)}</div>
                <div className="label">Warning</div>
              </li>
              <li className="tile">
                <div className="value healthy-text">{count(summary.healthy)}</div>
                <div className="label">Healthy</div>
              </li>
            </ul>
          </>
        )}
        {report.fleet_narrative ? (
          <Markdown source={report.fleet_narrative} className="patrol-narrative" label="Fleet narrative" />
        ) : (
          <p className="muted">{failed ? 'None: the scan failed before it wrote one.' : 'No narrative in this report.'}</p>
        )}
      </section>

      <section aria-labelledby={`${id}-flagged`} className="patrol-section">
        <H id={`${id}-flagged`}>Flagged clusters ({count(flagged.length)})</H>
        {flagged.length === 0 ? (
          <Empty>{failed ? 'None: the scan failed before it flagged any cluster.' : 'No cluster was flagged.'}</Empty>
        ) : (
          <ScrollRegion label="Flagged clusters" className="patrol-flagged">
            <table>
              <caption className="visually-hidden">Flagged clusters, critical first</caption>
              <thead>
                <tr>
                  <th scope="col">Cluster</th>
                  <th scope="col">Severity</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Recommended action</th>
                </tr>
              </thead>
              <tbody>
                {flagged.map((c) => (
                  <tr key={c.cluster_id || c.cluster_name}>
                    <th scope="row">
                      {c.cluster_id ? <Link to={`/clusters/${encodeURIComponent(c.cluster_id)}`}>{c.cluster_name}</Link> : c.cluster_name}
                      <div className="muted patrol-customer">{c.customer_name}</div>
                    </th>
                    <td>
                      <Severity value={c.severity} />
                    </td>
                    <td className="ai-wrap">{c.reason}</td>
                    <td className="ai-wrap">
                      {c.recommended_action}
                      {c.cluster_id && (
                        <div>
                          <Link to={`/clusters/${encodeURIComponent(c.cluster_id)}`} className="patrol-act">
                            Open {c.cluster_name}
                            <span className="visually-hidden"> to act on it</span> →
                          </Link>
                        </div>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
        )}
      </section>

      <section aria-labelledby={`${id}-customers`} className="patrol-section">
        <H id={`${id}-customers`}>Customers ({count(report.customer_summaries_parsed.length)})</H>
        {report.customer_summaries_parsed.length === 0 ? (
          <Empty>{failed ? 'None: the scan failed before it summarised any customer.' : 'No customer summaries in this report.'}</Empty>
        ) : (
          <ul className="patrol-customers">
            {report.customer_summaries_parsed.map((c, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a report is never reordered, and one stored before the scan kept one summary per customer may name one twice
              <li key={`${i}:${c.customer_name}`} className="card">
                <Sub>{c.customer_name}</Sub>
                <p className="muted patrol-customer-counts">
                  {count(c.clusters)} cluster{c.clusters === 1 ? '' : 's'}, {count(c.flagged)} flagged
                </p>
                <p className="ai-wrap">{c.summary}</p>
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}
