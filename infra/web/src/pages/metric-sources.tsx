// Metric sources (/metric-sources, admins and superadmins; issue 20 §5): the
// metrics puller seen from the console. Where it reads (the metric-sources rule
// set, with a plain "disabled" state linking to its editor), its last run, how far
// each metric has come (lag, watermark, last success and error; sortable, the order
// kept in the URL), the inventory pull, the latest errors, and "Pull now". The
// status is read again every 30 s while the page is visible.
import { createColumnHelper } from '@tanstack/react-table';
import { useMemo } from 'react';
import { Link } from 'react-router';
import { useApi } from '../api/hooks';
import { DataTable, useUrlSorting } from '../components/data-table';
import { RULES_EDITOR_URL, statusEndpoint } from '../components/metric-sources/api';
import { count, durationMs, lag, OutcomeBadge, type Status, When } from '../components/metric-sources/format';
import { useNow } from '../components/time';
import { PullNow } from '../components/metric-sources/pull-now';
import { Empty, Loading, Problem } from '../components/states';
import '../components/metric-sources/metric-sources.css';

const REFRESH_MS = 30_000;

type Metric = Status['metrics'][number];
type PullError = Status['errors'][number];

const AUTH_LABEL: Record<Status['source']['auth'], string> = {
  none: 'none',
  bearer: 'bearer token (PROMETHEUS_CREDENTIAL)',
  basic: 'basic (password in PROMETHEUS_CREDENTIAL)',
  sigv4: 'AWS SigV4 (the puller’s role)',
};

const plural = (n: number, one: string, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`;

export default function MetricSourcesPage() {
  const status = useApi(statusEndpoint, {}, { refetchInterval: REFRESH_MS });
  const now = useNow();
  const data = status.data;

  return (
    <section className="ms-page" aria-labelledby="ms-title">
      <h1 id="ms-title">Metric sources</h1>
      <p className="muted ms-intro">
        The metrics puller reads the fleet's metrics from a Prometheus query API on a schedule and stores them through the ingest path. Its settings are the{' '}
        <Link to={RULES_EDITOR_URL}>metric-sources rule set</Link>. This page refreshes every {REFRESH_MS / 1000} s.
      </p>
      {status.isPending ? (
        <Loading what="the puller's status" />
      ) : status.isError && !data ? (
        <Problem error={status.error} retry={() => void status.refetch()} />
      ) : data ? (
        <>
          {status.isError && <Problem error={status.error} retry={() => void status.refetch()} />}
          <Source data={data} />
          <PullNow enabled={data.enabled} />
          <LastRun data={data} now={now} />
          <Metrics data={data} now={now} />
          <Inventory inventory={data.inventory} now={now} />
          <Errors errors={data.errors} now={now} />
        </>
      ) : null}
    </section>
  );
}

function Source({ data }: { data: Status }) {
  const s = data.source;
  return (
    <section className="card ms-source" aria-labelledby="ms-source-title">
      <h2 id="ms-source-title">
        Source <span className={`badge ${data.enabled ? 'healthy' : 'ms-off'}`}>{data.enabled ? 'enabled' : 'disabled'}</span>
      </h2>
      {!data.enabled && (
        <div className="notice ms-disabled">
          <p>
            <strong>Pulling is disabled.</strong> The puller reads nothing until <code>prometheus.enabled</code> is <code>true</code> in the metric-sources rule
            set{data.rules_version === 0 ? ' (the shipped default leaves it off)' : ''}.
          </p>
          <p>
            <Link to={RULES_EDITOR_URL}>Point it at your Prometheus and enable it in the rules editor</Link>
          </p>
        </div>
      )}
      <dl className="facts ms-facts">
        <dt>Query API</dt>
        <dd>
          <code>{s.url}</code>
        </dd>
        <dt>Authentication</dt>
        <dd>{AUTH_LABEL[s.auth]}</dd>
        <dt>Step</dt>
        <dd>{lag(s.step_seconds)} (one sample per cluster and metric per step)</dd>
        <dt>Settle</dt>
        <dd>{lag(s.settle_seconds)} behind now</dd>
        <dt>Backfill</dt>
        <dd>{plural(s.backfill_days, 'day')} (what a metric's first pull reaches back)</dd>
        <dt>Cluster label</dt>
        <dd>
          <code>{s.cluster_label}</code>, holding the cluster's {s.cluster_match === 'id' ? 'id' : 'name (mapped to its id through the inventory)'}
        </dd>
        <dt>Schedule</dt>
        <dd>every {plural(s.every_minutes, 'minute')}</dd>
        <dt>Rules version</dt>
        <dd>{data.rules_version === 0 ? '0 (the shipped default)' : data.rules_version}</dd>
      </dl>
    </section>
  );
}

function LastRun({ data, now }: { data: Status; now: number }) {
  const run = data.last_run;
  return (
    <section aria-labelledby="ms-run-title">
      <h2 id="ms-run-title">Last run</h2>
      {!run ? (
        <Empty>No pull has run yet. The schedule runs one every {plural(data.source.every_minutes, 'minute')}, or use Pull now.</Empty>
      ) : (
        <dl className="facts ms-facts">
          <dt>Outcome</dt>
          <dd className="ms-outcome">
            <OutcomeBadge outcome={run.outcome} />
          </dd>
          <dt>Points</dt>
          <dd>
            {count(run.accepted)} accepted, {count(run.refused)} refused
          </dd>
          <dt>Duration</dt>
          <dd>{durationMs(run.duration_ms)}</dd>
          <dt>Finished</dt>
          <dd>
            <When iso={run.finished_at} now={now} />
          </dd>
          <dt>Last full success</dt>
          <dd>
            <When iso={data.last_success_at} now={now} never="never: no run has pulled every metric yet" />
          </dd>
        </dl>
      )}
    </section>
  );
}

const metric = createColumnHelper<Metric>();

function Metrics({ data, now }: { data: Status; now: number }) {
  const [sorting, setSorting] = useUrlSorting('metric_key');
  // A metric is behind when it has missed more than two scheduled pulls past its settle time.
  const behindAfter = data.source.settle_seconds + data.source.step_seconds + 2 * data.source.every_minutes * 60;
  const columns = useMemo(
    () => [
      metric.accessor('metric_key', {
        header: 'Metric',
        size: 170,
        sortingFn: 'alphanumeric',
        cell: (c) => <code>{c.getValue()}</code>,
      }),
      metric.accessor((m) => m.lag_seconds ?? undefined, {
        id: 'lag',
        header: 'Lag',
        size: 150,
        sortUndefined: 'last',
        // Wraps: "7 h 31 min" and its "behind" badge do not fit one line, and cut with an ellipsis the badge went unseen.
        meta: { className: 'ms-wrap' },
        cell: (c) => {
          const v = c.row.original.lag_seconds;
          if (v === null) return <span className="muted">not pulled yet</span>;
          return (
            <>
              {lag(v)}
              {v > behindAfter && <span className="badge warning ms-behind">behind</span>}
            </>
          );
        },
      }),
      metric.accessor((m) => m.watermark ?? undefined, {
        id: 'watermark',
        header: 'Watermark',
        size: 210,
        sortUndefined: 'last',
        meta: { className: 'ms-wrap' },
        cell: (c) => <When iso={c.row.original.watermark} now={now} never="none" />,
      }),
      metric.accessor((m) => m.last_success_at ?? undefined, {
        id: 'last_success',
        header: 'Last success',
        size: 210,
        sortUndefined: 'last',
        meta: { className: 'ms-wrap' },
        cell: (c) => <When iso={c.row.original.last_success_at} now={now} />,
      }),
      // 120 px: "(last run)" and its sort mark share a line (at 100 the mark fell to a third one).
      metric.accessor('accepted_last', { header: 'Accepted (last run)', size: 120, meta: { numeric: true }, cell: (c) => count(c.getValue()) }),
      metric.accessor('refused_last', {
        header: 'Refused (last run)',
        size: 150,
        meta: { numeric: true, className: 'ms-wrap' },
        cell: (c) => {
          const reason = c.row.original.refusal_last;
          return (
            <>
              {count(c.getValue())}
              {reason && c.getValue() > 0 && <div className="muted ms-refusal">mostly: {reason}</div>}
            </>
          );
        },
      }),
      metric.accessor((m) => m.last_error?.message ?? undefined, {
        id: 'last_error',
        header: 'Last error',
        size: 320,
        sortUndefined: 'last',
        meta: { className: 'ms-wrap' },
        cell: (c) => {
          const e = c.row.original.last_error;
          if (!e) return <span className="muted">none</span>;
          return (
            <>
              <span className="ms-error-label">Error:</span> {e.message}{' '}
              <span className="muted">
                (<When iso={e.at} now={now} />)
              </span>
            </>
          );
        },
      }),
      metric.accessor('query', {
        header: 'Query',
        size: 360,
        enableSorting: false,
        // One line, cut, the whole query in its tooltip (and in the rule set): wrapped, a query past the screen's right
        // edge made its row three times as tall as its status, blank where the status is read.
        meta: { className: 'ms-query-cell' },
        // What Prometheus said of the query with its last answers (a PromQL warning or info), under it.
        cell: (c) => {
          const warning = c.row.original.warning_last;
          return (
            <>
              <code className="ms-query" title={c.getValue()}>
                {c.getValue()}
              </code>
              {warning && <div className="muted ms-refusal">Prometheus: {warning}</div>}
            </>
          );
        },
      }),
    ],
    [behindAfter, now],
  );
  const failing = data.metrics.filter((m) => m.last_error).length;
  return (
    <section aria-labelledby="ms-metrics-title">
      <h2 id="ms-metrics-title">Metrics</h2>
      <p className="muted">
        {plural(data.metrics.length, 'metric')} in the rule set{failing ? `, ${count(failing)} with an error` : ''}. Lag is how far the watermark (the last step
        stored) is behind now.
      </p>
      <DataTable
        data={data.metrics}
        columns={columns}
        caption="Pull status per metric"
        getRowId={(m) => m.metric_key}
        sorting={sorting}
        onSortingChange={setSorting}
        rowHeight={56}
        empty="The rule set lists no metrics."
      />
    </section>
  );
}

function Inventory({ inventory, now }: { inventory: Status['inventory']; now: number }) {
  return (
    <section aria-labelledby="ms-inventory-title">
      <h2 id="ms-inventory-title">
        Inventory <span className={`badge ${inventory.enabled ? 'healthy' : 'ms-off'}`}>{inventory.enabled ? 'enabled' : 'disabled'}</span>
      </h2>
      {!inventory.enabled ? (
        <p className="muted">
          Clusters are not read from Prometheus: they arrive through the ingest routes. <code>inventory.enabled</code> in the{' '}
          <Link to={RULES_EDITOR_URL}>rule set</Link> upserts them from an info series.
        </p>
      ) : null}
      <dl className="facts ms-facts">
        <dt>Last success</dt>
        <dd>
          <When iso={inventory.last_success_at} now={now} />
        </dd>
        <dt>Last run</dt>
        <dd>
          {plural(inventory.upserted_last, 'cluster')} upserted, {count(inventory.refused_last)} refused
        </dd>
        <dt>Last error</dt>
        <dd>
          {inventory.last_error ? (
            <>
              <span className="ms-error-label">Error:</span> {inventory.last_error.message}{' '}
              <span className="muted">
                (<When iso={inventory.last_error.at} now={now} />)
              </span>
            </>
          ) : (
            <span className="muted">none</span>
          )}
        </dd>
      </dl>
    </section>
  );
}

function Errors({ errors, now }: { errors: PullError[]; now: number }) {
  const newestFirst = useMemo(() => [...errors].sort((a, b) => Date.parse(b.at) - Date.parse(a.at)), [errors]);
  return (
    <section aria-labelledby="ms-errors-title">
      <h2 id="ms-errors-title">Latest errors</h2>
      {newestFirst.length === 0 ? (
        <Empty>No errors recorded.</Empty>
      ) : (
        <ol className="ms-errors" aria-label="Latest errors, newest first">
          {newestFirst.map((e) => (
            <li key={`${e.at} ${e.metric_key ?? ''} ${e.message}`}>
              <div className="ms-error-head">
                <span className="ms-error-label">Error</span> · {e.metric_key ? <code>{e.metric_key}</code> : <span>inventory or the run as a whole</span>} ·{' '}
                <When iso={e.at} now={now} />
              </div>
              <p className="ms-error-message">{e.message}</p>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
