// What the issue page shows beside the issue: its alert timeline, the evidence
// (the cluster's alerts of the last 7 days, key metrics of the last 24 hours, its
// inventory record) and the cluster's other issues. Each loads on its own, so a
// slow or failing part never hides the others. Alert lists are the newest only, and
// say so when the answer left some out.
import { endpoint } from '../../api/client';
import { useApi } from '../../api/hooks';
import type { Answer } from '../../api/types';
import { count, decimal } from '../format';
import { metricLabel } from '../metric-label';
import { SiblingLink } from '../list-link';
import { Empty, Loading, Problem } from '../states';
import { duration, isWebLink, Maybe, Severity, Status, When } from './format';
import { ScrollRegion } from '../scroll-region';

const evidenceEndpoint = endpoint<'issues', 'evidence'>('GET', '/api/issues/{issue_id}/evidence');
const historyEndpoint = endpoint<'issues', 'clusterHistory'>('GET', '/api/issues/{issue_id}/cluster-history');

type TimelineEntry = Answer<'issues', 'get'>['alerts'][number];

function Dashboard({ url, label }: { url: string; label: string }) {
  if (!url || !isWebLink(url)) return null;
  return (
    <a href={url} target="_blank" rel="noreferrer noopener">
      Dashboard<span className="visually-hidden"> for {label} (opens in a new tab)</span>
    </a>
  );
}

const alertStatusClass = (status: string) => (status.toLowerCase() === 'firing' ? 'critical' : status.toLowerCase() === 'resolved' ? 'healthy' : '');

/** Answers list the newest alerts only (a Lambda answer is bounded): say so when some are left out. */
function ShownOf({ shown, total, truncated }: { shown: number; total: number; truncated: boolean }) {
  if (!truncated) return null;
  return (
    <p className="muted issue-help">
      Showing the newest {count(shown)} of {count(total)} alerts.
    </p>
  );
}

export function Timeline({ alerts, total, truncated }: { alerts: TimelineEntry[]; total: number; truncated: boolean }) {
  return (
    <section aria-labelledby="timeline-title" className="issue-timeline">
      <h2 id="timeline-title">Alert timeline</h2>
      {alerts.length > 0 && <ShownOf shown={alerts.length} total={total} truncated={truncated} />}
      {alerts.length === 0 ? (
        // An issue outlives its alerts: they are kept 400 days after they were last heard (ALERT_RETENTION_DAYS), the issue for good.
        <Empty>
          {total > 0
            ? `None of this issue's ${count(total)} alert${total === 1 ? '' : 's'} can be shown: alerts are kept 400 days after they were last heard.`
            : 'No alerts are linked to this issue.'}
        </Empty>
      ) : (
        <ol>
          {alerts.map((a) => (
            <li key={a.alert_id}>
              <div className="issue-timeline-head">
                <time dateTime={a.starts_at}>{a.time}</time>
                <span className={`badge ${alertStatusClass(a.status)}`}>{a.status}</span>
                <strong>{a.alert_name}</strong>
                {a.ends_at && (
                  <span className="muted">
                    ended <When iso={a.ends_at} seconds />
                  </span>
                )}
              </div>
              {a.detail && <p>{a.detail}</p>}
              <Dashboard url={a.dashboard_url} label={`${a.alert_name} at ${a.time}`} />
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

export function Evidence({ issueId }: { issueId: string }) {
  const evidence = useApi(evidenceEndpoint, { params: { issue_id: issueId } });
  return (
    <section aria-labelledby="evidence-title" className="issue-evidence" aria-busy={evidence.isFetching}>
      <h2 id="evidence-title">Evidence</h2>
      {evidence.isPending ? (
        <Loading what="evidence" />
      ) : evidence.isError ? (
        <Problem error={evidence.error} retry={() => void evidence.refetch()} />
      ) : (
        <>
          <h3>Cluster alerts, last 7 days</h3>
          <ShownOf shown={evidence.data.alerts.length} total={evidence.data.alerts_total} truncated={evidence.data.alerts_truncated} />
          {evidence.data.alerts.length === 0 ? (
            <Empty>No alerts on this cluster in the last 7 days.</Empty>
          ) : (
            <ScrollRegion label="Alerts on the cluster in the last 7 days">
              <table>
                <caption className="visually-hidden">Alerts on the cluster in the last 7 days</caption>
                <thead>
                  <tr>
                    <th scope="col">Started</th>
                    <th scope="col">Alert</th>
                    <th scope="col">Severity</th>
                    <th scope="col">Status</th>
                    <th scope="col">Ended</th>
                    <th scope="col">Summary</th>
                    <th scope="col">
                      <span className="visually-hidden">Links</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {evidence.data.alerts.map((a) => (
                    <tr key={a.alert_id}>
                      <td>
                        <time dateTime={a.starts_at}>{a.time}</time>
                      </td>
                      <th scope="row" className="issue-name-cell">
                        {a.alert_name}
                      </th>
                      <td>
                        <Severity value={a.severity} />
                      </td>
                      <td>
                        <span className={`badge ${alertStatusClass(a.status)}`}>{a.status}</span>
                      </td>
                      <td>
                        <When iso={a.ends_at} seconds />
                      </td>
                      <td className="issue-wrap" title={a.detail}>
                        {a.summary || a.detail}
                      </td>
                      <td>
                        <Dashboard url={a.dashboard_url} label={`${a.alert_name} at ${a.time}`} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollRegion>
          )}

          {/* The service reads the last 24 hours as the UTC days they fall on (daily rollups): up to two days' samples, said so. */}
          <h3>Key metrics, today and yesterday (UTC)</h3>
          <p className="muted issue-help">
            <When iso={evidence.data.metrics_window.from} /> to <When iso={evidence.data.metrics_window.to} />: {evidence.data.metrics_window.basis}.
          </p>
          {evidence.data.metrics.length === 0 ? (
            <Empty>No metrics for this cluster in the window.</Empty>
          ) : (
            <ScrollRegion label="Key metrics of today and yesterday (UTC)">
              <table>
                <caption className="visually-hidden">Key metrics of today and yesterday (UTC)</caption>
                <thead>
                  <tr>
                    <th scope="col">Metric</th>
                    <th scope="col" className="num">
                      Latest
                    </th>
                    <th scope="col" className="num">
                      Min
                    </th>
                    <th scope="col" className="num">
                      Average
                    </th>
                    <th scope="col" className="num">
                      Max
                    </th>
                    <th scope="col" className="num">
                      Samples
                    </th>
                    <th scope="col">Latest at</th>
                  </tr>
                </thead>
                <tbody>
                  {evidence.data.metrics.map((m) => (
                    <tr key={m.metric_key}>
                      <th scope="row">
                        <span title={m.metric_key}>{metricLabel(m.metric_key, { unit: true })}</span>
                      </th>
                      <td className="num">{decimal(m.latest)}</td>
                      <td className="num">{decimal(m.min)}</td>
                      <td className="num">{decimal(m.avg)}</td>
                      <td className="num">{decimal(m.max)}</td>
                      <td className="num">{count(m.samples)}</td>
                      <td>
                        <When iso={m.latest_at} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollRegion>
          )}

          <h3>Inventory</h3>
          {evidence.data.cluster ? (
            <dl className="facts issue-inventory">
              {Object.entries(evidence.data.cluster).map(([key, value]) => (
                <Fact key={key} name={key} value={value} />
              ))}
            </dl>
          ) : (
            <Empty>The cluster has no inventory record.</Empty>
          )}
        </>
      )}
    </section>
  );
}

function Fact({ name, value }: { name: string; value: unknown }) {
  const text = value === null || value === undefined || value === '' ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return (
    <>
      <dt>{name.replace(/_/g, ' ')}</dt>
      <dd>
        <Maybe value={text} />
      </dd>
    </>
  );
}

export function ClusterHistory({ issueId }: { issueId: string }) {
  const history = useApi(historyEndpoint, { params: { issue_id: issueId } });
  return (
    <section aria-labelledby="history-title" className="issue-history" aria-busy={history.isFetching}>
      <h2 id="history-title">Cluster history</h2>
      {history.isPending ? (
        <Loading what="the cluster's history" />
      ) : history.isError ? (
        <Problem error={history.error} retry={() => void history.refetch()} />
      ) : history.data.issues.length === 0 ? (
        <Empty>No other issues on {history.data.cluster_name}.</Empty>
      ) : (
        <>
          <p className="muted issue-help">
            {history.data.total === 1 ? '1 other issue' : `${count(history.data.total)} other issues`} on {history.data.cluster_name}
            {history.data.total > history.data.issues.length ? `, the latest ${count(history.data.issues.length)} shown` : ''}.
          </p>
          <ScrollRegion label={`Other issues of ${history.data.cluster_name}`}>
            <table>
              <caption className="visually-hidden">Other issues of {history.data.cluster_name}</caption>
              <thead>
                <tr>
                  <th scope="col">Issue</th>
                  <th scope="col">Severity</th>
                  <th scope="col">Status</th>
                  <th scope="col">First seen</th>
                  <th scope="col" className="num">
                    Duration
                  </th>
                  <th scope="col">Triage</th>
                </tr>
              </thead>
              <tbody>
                {history.data.issues.map((h) => (
                  <tr key={h.issue_id}>
                    <th scope="row" className="issue-name-cell">
                      <SiblingLink to={`/issues/${encodeURIComponent(h.issue_id)}`}>{h.issue_name}</SiblingLink>
                    </th>
                    <td>
                      <Severity value={h.severity} />
                    </td>
                    <td>
                      <Status value={h.status} />
                    </td>
                    <td>
                      <When iso={h.first_seen} />
                    </td>
                    <td className="num">{duration(h.duration_minutes)}</td>
                    <td>
                      <Maybe value={h.triage_status} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
        </>
      )}
    </section>
  );
}
