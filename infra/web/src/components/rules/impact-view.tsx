// What a health or risk rules text would change on the current fleet: the clusters per class (or risk level) now
// and with the text, and each cluster that would move, with why. A pending proposal's page shows it, and the Rules
// editor's preview shows it for an edit before it is saved or proposed.
import { Link } from 'react-router';
import type { ChangeDetail } from './api';
import { count } from '../format';
import { ScrollRegion } from '../scroll-region';
import { When } from '../time';

export type RuleImpact = NonNullable<ChangeDetail['impact']>;

/** `after` heads the column of the text's figures: "With the proposal", "With your edit". */
export function ImpactView({ impact, after }: { impact: RuleImpact; after: string }) {
  const what = impact.measure === 'risk_level' ? 'risk level' : 'class';
  return (
    <>
      <p>
        {impact.changed_count === 0
          ? `No cluster would change ${what}`
          : `${count(impact.changed_count)} of ${count(impact.clusters_total)} ${impact.clusters_total === 1 ? 'cluster' : 'clusters'} would change ${what}`}{' '}
        <span className="muted">
          (computed <When iso={impact.computed_at} />
          ).
        </span>
      </p>
      <ScrollRegion label={`Clusters per ${what}, before and after`} className="impact-counts-box">
        <table className="impact-counts">
          <caption className="visually-hidden">
            Clusters per {what}: now, and {after.toLowerCase()}
          </caption>
          <thead>
            <tr>
              <th scope="col">{impact.measure === 'risk_level' ? 'Risk level' : 'Class'}</th>
              <th scope="col">Now</th>
              <th scope="col">{after}</th>
            </tr>
          </thead>
          <tbody>
            {(['Healthy', 'Warning', 'Critical'] as const).map((c) => (
              <tr key={c}>
                <th scope="row">
                  <span className={`badge ${c}`}>{c}</span>
                </th>
                <td>{count(impact.before[c])}</td>
                <td>{count(impact.after[c])}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
      {impact.changes.length > 0 && (
        <>
          <h3>Clusters that would change</h3>
          <ScrollRegion label="Clusters that would change">
            <table className="impact-changes">
              <caption className="visually-hidden">Clusters that would change {what}</caption>
              <thead>
                <tr>
                  <th scope="col">Cluster</th>
                  <th scope="col">Customer</th>
                  <th scope="col">Now</th>
                  <th scope="col">{after}</th>
                  <th scope="col">Why</th>
                </tr>
              </thead>
              <tbody>
                {impact.changes.map((c) => (
                  <tr key={c.cluster_id}>
                    <th scope="row">
                      <Link to={`/clusters/${encodeURIComponent(c.cluster_id)}`}>{c.cluster_name}</Link>
                    </th>
                    <td>{c.customer_name}</td>
                    <td>
                      <span className={`badge ${c.from}`}>{c.from}</span>
                    </td>
                    <td>
                      <span className={`badge ${c.to}`}>{c.to}</span> <span className="muted">({c.direction})</span>
                    </td>
                    <td className="wrap">{c.detail}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
        </>
      )}
    </>
  );
}
