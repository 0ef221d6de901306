// Investigations (/investigations): what the agent found on clusters that met the
// AI trigger. The window's KPIs; the list filtered by days, severity and customer
// (kept in the URL, paged), each linking to its full report; and the agent tasks
// still pending or running.
import { keepPreviousData } from '@tanstack/react-query';
import { Link } from 'react-router';
import { endpoint } from '../api/client';
import { useApi } from '../api/hooks';
import { validWholeDays, WholeDaysField } from '../components/ai/days-field';
import { InvestigationTable } from '../components/ai/investigation-table';
import { count, KpiTiles, seconds, usd } from '../components/ai/kpis';
import { Pager, positive } from '../components/pager';
import { When } from '../components/issues/format';
import { useDraft } from '../components/use-draft';
import { ScrollRegion } from '../components/scroll-region';
import { Empty, Loading, Problem } from '../components/states';
import { useUrlState } from '../components/url-state';
import '../components/ai/ai-table.css';
import './investigations.css';
import { percent } from '../components/format';

const listEndpoint = endpoint<'investigations', 'list'>('GET', '/api/investigations');
const kpisEndpoint = endpoint<'investigations', 'kpis'>('GET', '/api/investigations/kpis');
const tasksEndpoint = endpoint<'investigations', 'pendingTasks'>('GET', '/api/investigations/pending-tasks');

const DEFAULTS = { days: '30', severity: '', customer: '', page: '1', page_size: '20' };
type Filters = typeof DEFAULTS;
const SEVERITIES = ['critical', 'warning', 'info'] as const;

export default function InvestigationsPage() {
  const [filters, setFilters] = useUrlState<keyof Filters>(DEFAULTS) as [Filters, (c: Partial<Filters>) => void];
  const days = validWholeDays(filters.days) ? Number(filters.days) : 30;
  const page = positive(filters.page, 1);
  const pageSize = Math.min(100, positive(filters.page_size, 20));
  const severity = (SEVERITIES as readonly string[]).includes(filters.severity) ? (filters.severity as (typeof SEVERITIES)[number]) : '';
  const kpis = useApi(kpisEndpoint, { query: { days } }, { placeholderData: keepPreviousData });
  const list = useApi(
    listEndpoint,
    { query: { days, severity, customer: filters.customer || undefined, page, page_size: pageSize } },
    { placeholderData: keepPreviousData },
  );
  const filter = (c: Partial<Filters>) => setFilters({ ...c, page: '1' });
  const filtered = filters.severity !== '' || filters.customer !== '';
  const k = kpis.data;

  return (
    <section className="investigations-page" aria-labelledby="investigations-title">
      <h1 id="investigations-title">Investigations</h1>
      <p className="muted inv-intro">
        The agent investigates clusters that meet the AI trigger after each score refresh (the rules engine writes the report when no language model is
        configured).
      </p>
      {kpis.isError ? (
        <Problem error={kpis.error} retry={() => void kpis.refetch()} />
      ) : (
        <KpiTiles
          busy={kpis.isFetching}
          note={`The last ${days} days; severity and customer narrow only the list.`}
          tiles={[
            ['Investigations', k && count(k.total_investigations)],
            ['Critical', k && count(k.critical_count)],
            ['Warning', k && count(k.warning_count)],
            ['Info', k && count(k.info_count)],
            // No investigation, no average: 0 would read as a measured one (as on the patrol page).
            ['Average confidence', k && (k.total_investigations > 0 ? percent(k.avg_confidence) : '—')],
            ['Average duration', k && (k.total_investigations > 0 ? seconds(k.avg_duration_s) : '—')],
            ['Tokens', k && count(k.total_tokens)],
            ['Cost', k && usd(k.total_cost_usd)],
          ]}
        />
      )}
      <FilterBar filters={filters} filter={filter} filtered={filtered} clear={() => filter({ severity: '', customer: '' })} />
      <Results list={list} days={days} page={page} pageSize={pageSize} filtered={filtered} setFilters={setFilters} />
      <PendingTasks />
    </section>
  );
}

function FilterBar({ filters, filter, filtered, clear }: { filters: Filters; filter: (c: Partial<Filters>) => void; filtered: boolean; clear: () => void }) {
  const [customer, setCustomer] = useDraft(filters.customer, (v) => filter({ customer: v }));
  return (
    <form className="toolbar inv-filters" aria-label="Filter investigations" onSubmit={(e) => e.preventDefault()}>
      <WholeDaysField value={filters.days} commit={(v) => filter({ days: v })} prefix="inv" />
      <label>
        Severity
        <select value={filters.severity} onChange={(e) => filter({ severity: e.target.value })}>
          <option value="">Any</option>
          {SEVERITIES.map((s) => (
            <option key={s} value={s}>
              {s[0]?.toUpperCase()}
              {s.slice(1)}
            </option>
          ))}
        </select>
      </label>
      <label className="inv-customer">
        Customer
        <input type="search" value={customer} onChange={(e) => setCustomer(e.target.value)} placeholder="Part of the name" maxLength={200} />
      </label>
      {filtered && (
        <button type="button" onClick={clear}>
          Clear filters
        </button>
      )}
    </form>
  );
}

function Results({
  list,
  days,
  page,
  pageSize,
  filtered,
  setFilters,
}: {
  list: ReturnType<typeof useApi<'investigations', 'list'>>;
  days: number;
  page: number;
  pageSize: number;
  filtered: boolean;
  setFilters: (c: Partial<Filters>) => void;
}) {
  if (list.isPending) return <Loading what="investigations" />;
  if (list.isError && !list.data) return <Problem error={list.error} retry={() => void list.refetch()} />;
  const data = list.data;
  if (!data) return null;
  const totalPages = Math.max(1, Math.ceil(data.total / data.page_size));
  return (
    <section aria-labelledby="inv-results" className="inv-results">
      <h2 id="inv-results">Reports</h2>
      {list.isError && <Problem error={list.error} retry={() => void list.refetch()} />}
      <p className="muted ai-count" role="status" aria-live="polite">
        {list.isFetching ? 'Updating… ' : ''}
        {data.total === 1 ? '1 investigation' : `${data.total} investigations`} in the last {days} days
      </p>
      {data.total === 0 ? (
        <Empty>
          {filtered
            ? 'No investigation in this window matches these filters.'
            : 'No investigations in this window. They are written when a score refresh finds clusters meeting the AI trigger (the rules’ ai_trigger section).'}
        </Empty>
      ) : data.investigations.length === 0 ? (
        <Empty>
          <p>Page {page} is past the last page.</p>
          <button type="button" onClick={() => setFilters({ page: String(totalPages) })}>
            Go to page {totalPages}
          </button>
        </Empty>
      ) : (
        <InvestigationTable
          rows={data.investigations}
          busy={list.isFetching}
          label="Investigation reports"
          caption={`Investigations, newest first, page ${page} of ${totalPages}`}
        />
      )}
      {data.total > 0 && <Pager page={page} totalPages={totalPages} pageSize={pageSize} set={setFilters} />}
    </section>
  );
}

function PendingTasks() {
  const tasks = useApi(tasksEndpoint, {}, { refetchInterval: 15_000 });
  return (
    <section aria-labelledby="tasks-title" className="inv-tasks" aria-busy={tasks.isFetching}>
      <h2 id="tasks-title">Agent tasks pending or running</h2>
      {tasks.isPending ? (
        <Loading what="agent tasks" />
      ) : tasks.isError ? (
        <Problem error={tasks.error} retry={() => void tasks.refetch()} />
      ) : tasks.data.tasks.length === 0 ? (
        <Empty>No agent task is waiting or running. Tasks are created after each score refresh for clusters meeting the AI trigger.</Empty>
      ) : (
        <>
          <p className="muted ai-count">
            {tasks.data.total} task{tasks.data.total === 1 ? '' : 's'}
            {tasks.data.total > tasks.data.tasks.length ? `, the ${tasks.data.tasks.length} most urgent shown` : ''}; updated every 15 s.
          </p>
          <ScrollRegion label="Agent tasks" className="ai-table">
            <table>
              <caption className="visually-hidden">Agent tasks pending or running, most urgent first</caption>
              <thead>
                <tr>
                  <th scope="col">Cluster</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="num">
                    Priority
                  </th>
                  <th scope="col">Tier</th>
                  <th scope="col">Why</th>
                  <th scope="col">Created</th>
                  <th scope="col" className="num">
                    Attempts
                  </th>
                </tr>
              </thead>
              <tbody>
                {tasks.data.tasks.map((t) => (
                  <tr key={t.task_id}>
                    <th scope="row">
                      <Link to={`/clusters/${encodeURIComponent(t.cluster_id)}`}>{t.cluster_name}</Link>
                      <div className="muted ai-sub">{t.customer_name}</div>
                    </th>
                    <td>
                      <span className={`badge ${t.status === 'running' ? 'warning' : ''}`}>{t.status}</span>
                      {t.claimed_at && (
                        <div className="muted ai-sub">
                          since <When iso={t.claimed_at} />
                        </div>
                      )}
                    </td>
                    <td className="num">{t.priority}</td>
                    <td>{t.customer_tier}</td>
                    <td className="ai-wrap">
                      {t.trigger_reason}
                      {t.last_error && <div className="error ai-sub">Last error: {t.last_error}</div>}
                    </td>
                    <td>
                      <When iso={t.created_at} />
                    </td>
                    <td className="num">{t.attempts}</td>
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
