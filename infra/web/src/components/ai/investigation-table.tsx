// The table of investigations (styles: ai-table.css, shared by the AI pages' tables), for the investigations page (every cluster's) and a
// cluster's page (its own, so without the cluster column: the row is named by when
// it was made). Each row links to the full report; the usage columns say what it cost.
import type { Answer } from '../../api/types';
import { percent } from '../format';
import { ItemLink } from '../list-link';
import { ScrollRegion } from '../scroll-region';
import { When } from '../time';
import { Severity } from '../issues/format';
import { UsageCells, UsageHeads } from './usage';
import './ai-table.css';

type Row = Answer<'investigations', 'list'>['investigations'][number];

interface Props {
  rows: Row[];
  /** The scroll region's accessible name, and the table's caption. */
  label: string;
  caption: string;
  busy?: boolean;
  /** All rows are of one cluster (its page): leave out the cluster column. */
  ofOneCluster?: boolean;
}

export function InvestigationTable({ rows, label, caption, busy = false, ofOneCluster = false }: Props) {
  const report = (r: Row) => `/investigations/${encodeURIComponent(r.investigation_id)}`;
  return (
    <ScrollRegion label={label} className={busy ? 'ai-table ai-busy' : 'ai-table'}>
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {ofOneCluster ? <th scope="col">Created (UTC)</th> : <th scope="col">Cluster</th>}
            <th scope="col">Severity</th>
            <th scope="col" className="num">
              Confidence
            </th>
            <th scope="col">Root cause</th>
            {!ofOneCluster && <th scope="col">Created (UTC)</th>}
            <UsageHeads />
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.investigation_id}>
              <th scope="row">
                {ofOneCluster ? (
                  <ItemLink to={report(r)}>
                    <When iso={r.created_at} label={false} />
                  </ItemLink>
                ) : (
                  <>
                    <ItemLink to={report(r)}>{r.cluster_name}</ItemLink>
                    <div className="muted ai-sub">{r.customer_name}</div>
                  </>
                )}
              </th>
              <td>
                <Severity value={r.severity} />
              </td>
              <td className="num">{percent(r.confidence)}</td>
              <td className="ai-wrap">{r.root_cause}</td>
              {!ofOneCluster && (
                <td>
                  <When iso={r.created_at} label={false} />
                </td>
              )}
              <UsageCells model={r.model === 'rules' ? 'rules engine' : r.model} row={r} />
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
