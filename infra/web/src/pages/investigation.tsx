// One investigation (/investigations/{id}): severity, confidence and cost, the
// root cause and recommended actions, and the agent's full Markdown report,
// rendered and sanitised (components/markdown.tsx).
import { Link, useParams } from 'react-router';
import { BackLink } from '../components/list-link';
import { endpoint } from '../api/client';
import { useApi } from '../api/hooks';
import type { Answer } from '../api/types';
import { count, seconds, usd } from '../components/ai/kpis';
import { Severity, When } from '../components/issues/format';
import { Markdown } from '../components/markdown';
import { Loading, Problem } from '../components/states';
import './investigations.css';
import './investigation.css';
import { percent } from '../components/format';

const getEndpoint = endpoint<'investigations', 'get'>('GET', '/api/investigations/{investigation_id}');

type Investigation = Answer<'investigations', 'get'>;

export default function InvestigationPage() {
  const { investigationId = '' } = useParams();
  const inv = useApi(getEndpoint, { params: { investigation_id: investigationId } }, { retry: (n, e) => e.status >= 500 && n < 2 });
  return (
    <section className="investigation-page" aria-labelledby="inv-title">
      <p className="ai-back">
        <BackLink list="/investigations">Investigations</BackLink>
      </p>
      {inv.isPending ? (
        <>
          <h1 id="inv-title">Investigation</h1>
          <Loading what="the investigation" />
        </>
      ) : inv.isError ? (
        <>
          <h1 id="inv-title">{inv.error.status === 404 ? 'Investigation not found' : 'Investigation'}</h1>
          <Problem error={inv.error} retry={inv.error.status === 404 ? undefined : () => void inv.refetch()} />
        </>
      ) : (
        <Detail inv={inv.data} />
      )}
    </section>
  );
}

function Detail({ inv }: { inv: Investigation }) {
  return (
    <>
      <header>
        <h1 id="inv-title">Investigation of {inv.cluster_name}</h1>
        <p className="inv-badges">
          <Severity value={inv.severity} /> <span className="muted">confidence {percent(inv.confidence)}</span> ·{' '}
          <Link to={`/clusters/${encodeURIComponent(inv.cluster_id)}`}>{inv.cluster_name}</Link> · {inv.customer_name}
        </p>
      </header>
      <div className="inv-layout">
        <div className="inv-main">
          <section className="card" aria-labelledby="inv-cause">
            <h2 id="inv-cause">Root cause</h2>
            <p className="inv-cause">{inv.root_cause || <span className="muted">—</span>}</p>
            <h2 id="inv-actions">Recommended actions</h2>
            {inv.recommended_actions ? <Markdown source={inv.recommended_actions} label="Recommended actions" /> : <p className="muted">None.</p>}
          </section>
          <section className="card inv-report" aria-labelledby="inv-report">
            <h2 id="inv-report">Full report</h2>
            {inv.full_report ? <Markdown source={inv.full_report} label="Full investigation report" /> : <p className="muted">The report is empty.</p>}
          </section>
        </div>
        <aside className="card inv-side" aria-labelledby="inv-facts">
          <h2 id="inv-facts">Facts</h2>
          <dl className="facts ai-facts">
            <dt>Created</dt>
            <dd>
              <When iso={inv.created_at} />
            </dd>
            <dt>Model</dt>
            <dd>{inv.model === 'rules' ? 'rules engine (no language model)' : inv.model}</dd>
            <dt>Duration</dt>
            <dd>{seconds(inv.duration_seconds)}</dd>
            <dt>Tokens</dt>
            <dd>
              {count(inv.total_tokens)} ({count(inv.input_tokens)} in, {count(inv.output_tokens)} out)
            </dd>
            <dt>Cost</dt>
            <dd>{usd(inv.cost_usd)}</dd>
            <dt>Investigation id</dt>
            <dd>
              <code>{inv.investigation_id}</code>
            </dd>
            <dt>Task id</dt>
            <dd>
              <code>{inv.task_id}</code>
            </dd>
          </dl>
        </aside>
      </div>
    </>
  );
}
