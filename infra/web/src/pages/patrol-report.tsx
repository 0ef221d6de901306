// One patrol report (/patrol/{id}): rendered in full; while it is still running
// the page polls it until it ends.
import { useParams } from 'react-router';
import { BackLink } from '../components/list-link';
import { endpoint } from '../api/client';
import { useApi } from '../api/hooks';
import { PatrolReportView } from '../components/ai/patrol-report';
import { utc } from '../components/issues/format';
import { Loading, Problem } from '../components/states';
import './patrol.css';

const reportEndpoint = endpoint<'patrol', 'get'>('GET', '/api/patrol/{report_id}');

export default function PatrolReportPage() {
  const { reportId = '' } = useParams();
  const report = useApi(
    reportEndpoint,
    { params: { report_id: reportId } },
    {
      retry: (n, e) => e.status >= 500 && n < 2,
      refetchInterval: (q) => (q.state.data?.status === 'running' ? 2000 : false),
    },
  );
  return (
    <section className="patrol-page patrol-report-page" aria-labelledby="report-title">
      <p className="ai-back">
        <BackLink list="/patrol">Patrol</BackLink>
      </p>
      <h1 id="report-title">
        {report.data ? `Patrol report, ${utc(report.data.created_at)}` : report.error?.status === 404 ? 'Report not found' : 'Patrol report'}
      </h1>
      {report.isPending ? (
        <Loading what="the report" />
      ) : report.isError ? (
        <Problem error={report.error} retry={report.error.status === 404 ? undefined : () => void report.refetch()} />
      ) : (
        <PatrolReportView report={report.data} />
      )}
    </section>
  );
}
