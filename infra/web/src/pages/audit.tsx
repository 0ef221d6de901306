// Audit log (/audit, admins and superadmins): the newest entries first, filtered by
// action and paged; the filter and page live in the URL so a link reproduces the view.
// The API lists the newest 500 (of an action) at a time: "Before" (UTC, the log's own
// zone) and "Older entries" reach the rest, 500 before an instant.
// Pages are counted from the newest entry, and every sign-in writes one: paging on from the newest
// (no "Before") pins the listing to the newest entry it showed (`before` a millisecond after it, in the
// URL), so entries written meanwhile do not push the ones already seen onto the next page. The status
// then says the list is entries before that instant, and "Back to the newest" lists the new ones.
import { AUDIT_ACTIONS, type AuditAction } from '../../../../shared/db/audit-actions.js';
import { endpoint } from '../api/client';
import { invalidatePrefixes, useApi } from '../api/hooks';
import { useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import type { Answer } from '../api/types';
import { Pager, positive } from '../components/pager';
import { ScrollRegion } from '../components/scroll-region';
import { Button } from '../components/button';
import { count } from '../components/format';
import { Empty, Loading, PastLastPage, Problem } from '../components/states';
import { utcMillis, utcSeconds } from '../components/time';
import { useUrlState } from '../components/url-state';
import { RULE_SET_KEY, type RuleSetName } from '../components/rules/api';
import './audit.css';

const auditEp = endpoint<'settings', 'audit'>('GET', '/api/settings/audit');
type Entry = Answer<'settings', 'audit'>['entries'][number];

const DEFAULTS = { action: '', before: '', page: '1' };
const PAGE_SIZE = 25;

/** A detail value that is an instant as the API writes one (`expires_at`, `2026-12-11T09:12:37.100Z`). */
const INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
/** `before` as the API takes it: an instant with its zone (an edited link that is none lists the newest, as a blank one). */
const BEFORE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/** An instant as the log writes it (to the second, UTC), with its milliseconds when it has some: where a listing starts. */
const toTheMillisecond = (iso: string) => (iso.endsWith('.000Z') ? utcSeconds(iso) : utcMillis(iso));

/** The "Before" field's value (`datetime-local`, read as UTC) of a `before`, to the second. */
const fieldOf = (before: string) => (before ? new Date(before).toISOString().slice(0, 19) : '');
/** The `before` of the field's value: its UTC instant (`2026-12-01T10:30` or with seconds), blank for none. */
const beforeOf = (field: string) => (field ? `${field.length === 16 ? `${field}:00` : field}Z` : '');

/** The `before` that lists `newest` (an entry's `at`) and everything older: a millisecond after it (the bound is exclusive). */
const through = (newest: string) => new Date(Date.parse(newest) + 1).toISOString();

/**
 * A detail value: an instant written as the log's times are (to the second, UTC), text as it is, a number as the
 * pages count (1,234), yes or no, a list or object of those (listed), anything else as JSON.
 */
function DetailValue({ value }: { value: unknown }) {
  if (typeof value === 'string' && INSTANT.test(value)) return <time dateTime={value}>{utcSeconds(value)}</time>;
  return <>{plain(value) ?? listed(value) ?? JSON.stringify(value)}</>;
}
/** A list of plain values joined by commas; an object of them (a setting's before and after) as `key: value` pairs. */
const listed = (value: unknown): string | undefined => {
  if (value === null || typeof value !== 'object') return undefined;
  const pairs = Array.isArray(value) ? value.map((v) => [null, v] as const) : Object.entries(value);
  if (pairs.length === 0) return undefined; // [] or {} as JSON, not a blank cell
  const shown = pairs.map(([k, v]) => (plain(v) === undefined ? undefined : k === null ? plain(v) : `${k}: ${plain(v)}`));
  return shown.every((x) => x !== undefined) ? shown.join(', ') : undefined;
};
const plain = (value: unknown): string | undefined => {
  if (typeof value === 'string') return value;
  // Whole numbers grouped as the pages count (12,345); others as stored, not rounded to 3 places (0.0001 read 0).
  if (typeof value === 'number') return Number.isInteger(value) ? count(value) : String(value);
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return undefined;
};

/**
 * Where an entry's target is shown in the console: the issue, proposal, rule set or patrol report it names (an AI
 * issue's id starts `ai-`). Accounts have no page of their own; their targets stay text.
 */
function targetPath(action: string, target: string): string | null {
  const id = encodeURIComponent(target);
  if (action === 'issue_update' || action === 'ticket_create') return target.startsWith('ai-') ? `/ai-issues/${id}` : `/issues/${id}`;
  if (action.startsWith('change_')) return `/proposals/${id}`;
  if (action === 'patrol_trigger') return `/patrol/${id}`;
  if (action === 'rules_update' && target in RULE_SET_KEY) return `/rules?set=${RULE_SET_KEY[target as RuleSetName]}`;
  return null;
}

function Target({ action, target }: { action: string; target: string | null | undefined }) {
  if (!target) return <span className="muted">–</span>;
  const path = targetPath(action, target);
  return path ? <Link to={path}>{target}</Link> : target;
}

/** A change's before and after, last and next to each other, whatever else the entry holds (an AI issue's `source`). */
const PAIR_LAST: Record<string, number> = { before: 1, after: 2 };

function Detail({ detail }: { detail: Entry['detail'] }) {
  const entries = Object.entries(detail).sort(([a], [b]) => (PAIR_LAST[a] ?? 0) - (PAIR_LAST[b] ?? 0));
  if (entries.length === 0) return <span className="muted">–</span>;
  return (
    <dl className="audit-detail">
      {entries.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>
            <DetailValue value={v} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

export default function AuditPage() {
  const [filters, setFilters] = useUrlState(DEFAULTS);
  // An action the log does not know (an edited or old link) shows every action, where the API would answer 422.
  const action = (AUDIT_ACTIONS as readonly string[]).includes(filters.action as string) ? (filters.action as AuditAction) : '';
  const before = BEFORE.test(filters.before as string) && Number.isFinite(Date.parse(filters.before as string)) ? (filters.before as string) : '';
  const page = positive(filters.page as string, 1);
  const audit = useApi(auditEp, { query: { action, before, page, page_size: PAGE_SIZE } }, { placeholderData: (previous) => previous });
  const data = audit.data;
  // The newest as they are now: the listing of the newest this page read before it was pinned may be older than the cache keeps it.
  const client = useQueryClient();
  const toNewest = () => {
    void invalidatePrefixes(client, ['/api/settings/audit']);
    setFilters({ before: '', page: '1' });
  };
  // Onward from a listing of the newest: pinned to its first entry, the page renumbered from there (page 1 when on page 1).
  const turn = (changes: { page: string }) => {
    const to = positive(changes.page, 1);
    const first = data?.entries[0];
    if (before || !data || !first || to <= data.page) setFilters(changes);
    else setFilters({ before: through(first.at), page: String(to - data.page + 1) });
  };

  return (
    <section className="audit-page" aria-labelledby="audit-title">
      <h1 id="audit-title">Audit log</h1>
      <p className="muted">Sign-ins, invitations, account and rule changes, triage and tickets, newest first.</p>
      <div className="toolbar">
        <label>
          Action
          <select value={action} onChange={(e) => setFilters({ action: e.target.value, page: '1' })}>
            <option value="">All actions</option>
            {(data?.action_types ?? (action ? [action] : [])).map((a) => (
              <option key={a} value={a}>
                {a.replace(/_/g, ' ')}
              </option>
            ))}
          </select>
        </label>
        <label>
          Before (UTC)
          <input type="datetime-local" step="1" value={fieldOf(before)} onChange={(e) => setFilters({ before: beforeOf(e.target.value), page: '1' })} />
        </label>
      </div>
      {audit.isPending ? (
        <Loading what="the audit log" />
      ) : audit.isError ? (
        <Problem error={audit.error} retry={() => void audit.refetch()} />
      ) : data && data.entries.length === 0 && data.total > 0 ? (
        // An empty page of a log that is not empty: a page past the last (an old link or a bookmark).
        <PastLastPage page={page} last={data.total_pages} onLast={() => setFilters({ page: String(data.total_pages) })} />
      ) : data && data.entries.length === 0 ? (
        <>
          <Empty>
            {before
              ? `No ${action ? `${action.replace(/_/g, ' ')} ` : ''}entries before ${utcSeconds(before)}.`
              : action
                ? `No ${action.replace(/_/g, ' ')} entries.`
                : 'The audit log is empty.'}
          </Empty>
          {before && <Button onClick={toNewest}>Back to the newest</Button>}
        </>
      ) : data ? (
        <>
          <p className="muted" role="status" aria-live="polite">
            {data.total} {data.total === 1 ? 'entry' : 'entries'}
            {action ? ` of action ${action.replace(/_/g, ' ')}` : ''}
            {before ? ` before ${utcSeconds(before)}` : ''} (the log lists the newest {data.limit}
            {before ? ' before it' : ''}) · page {data.page} of {Math.max(1, data.total_pages)}
          </p>
          <ScrollRegion label="Audit entries">
            <table className="audit-table" aria-busy={audit.isFetching}>
              <caption className="visually-hidden">Audit entries, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">When (UTC)</th>
                  <th scope="col">Who</th>
                  <th scope="col">Action</th>
                  <th scope="col">Target</th>
                  <th scope="col">Detail</th>
                  <th scope="col">From</th>
                </tr>
              </thead>
              <tbody>
                {data.entries.map((e) => (
                  <tr key={e.id}>
                    <td>
                      <time dateTime={e.at}>{utcSeconds(e.at, { label: false })}</time>
                    </td>
                    <td className="audit-who">
                      {e.actor}
                      {e.role && <span className="muted"> · {e.role}</span>}
                    </td>
                    <td>
                      <span className={`audit-action ${e.action}`}>{e.action.replace(/_/g, ' ')}</span>
                    </td>
                    <td className="audit-wrap">
                      <Target action={e.action} target={e.target} />
                    </td>
                    <td className="audit-wrap">
                      <Detail detail={e.detail} />
                    </td>
                    <td className="audit-wrap">
                      {e.ip ?? '–'}
                      {e.user_agent && (
                        <div className="muted audit-agent" title={e.user_agent}>
                          {e.user_agent}
                        </div>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
          {(data.total_pages > 1 || data.page > 1) && <Pager page={data.page} totalPages={data.total_pages} set={turn} label="Pages of the audit list" />}
          {(data.older_before || before) && (
            <nav className="audit-reach" aria-label="Further back in the audit log">
              {before && <Button onClick={toNewest}>Back to the newest</Button>}
              {data.older_before && (
                <Button onClick={() => setFilters({ before: data.older_before ?? '', page: '1' })}>
                  Older entries (before {toTheMillisecond(data.older_before)})
                </Button>
              )}
            </nav>
          )}
        </>
      ) : null}
    </section>
  );
}
