// Small pieces the health, risk, critical and analysis pages share: a cluster's
// link, status badges, number formatting, a top risk, the "computed at" line (UTC)
// and a free-text filter box.
import { Link } from 'react-router';
import { count, decimal, score } from '../format';
import { When } from '../time';
import { useDraft } from '../use-draft';

/** Every cluster name links to its page. */
export function ClusterLink({ id, name }: { id: string; name: string }) {
  return <Link to={`/clusters/${encodeURIComponent(id)}`}>{name}</Link>;
}

/** A status word as a badge (the colour follows styles.css's .badge classes; the word is always shown). */
export function Badge({ status }: { status: string }) {
  return <span className={`badge ${status}`}>{status}</span>;
}

/** A figure as `decimal` (../format.ts) writes it; none is a dash. */
export const fmt = (n: number | null | undefined) => (n == null || !Number.isFinite(n) ? '–' : decimal(n));
/** A score as `score` (../format.ts) writes it, as the fleet page does; none is a dash. */
export const fmtScore = (n: number | null | undefined) => (n == null || !Number.isFinite(n) ? '–' : score(n));

/** The engine's `top_risk`, "Compaction Score (0)": a dimension's name and its 0–100 score. */
const TOP_RISK = /^(.+) \((\d+(?:\.\d+)?)\)$/;

/**
 * A top risk as the name and a muted "score 0": the bare "(0)" read as the metric's value (the compaction score was
 * 1,693). Any other text (the engine's "None") is shown as it is. In a table's cell (fleet, critical) the name is cut,
 * never the score: `title` there holds the whole text.
 */
export function TopRisk({ text, title }: { text: string; title?: string }) {
  const m = TOP_RISK.exec(text);
  if (!m) return <span title={title}>{text || '–'}</span>;
  return (
    <span className="top-risk" title={title}>
      <span className="top-risk-name">{m[1]}</span> <span className="muted top-risk-score">score {m[2]}</span>
    </span>
  );
}

/** "Computed …" under a page or section title. */
export function Stamp({ at, source }: { at?: string; source?: string }) {
  if (!at) return null;
  return (
    <p className="muted view-stamp">
      Computed <When iso={at} />
      {source ? ` · source ${source}` : ''}
    </p>
  );
}

/** Case-insensitive match of a search text against some fields. */
export const matches = (q: string, ...fields: (string | undefined)[]) => {
  const needle = q.trim().toLowerCase();
  return !needle || fields.some((f) => f?.toLowerCase().includes(needle));
};

/**
 * A filter value from the URL as one of the controls' options, in any case; anything else is '' (all). A hand-typed or
 * older link's value the controls cannot show would filter every row out while they said "All".
 */
export const knownOption = (value: string, options: readonly string[]): string => {
  const wanted = value.trim().toLowerCase();
  return options.find((o) => o.toLowerCase() === wanted) ?? '';
};

/** A labelled select over a list of values with an "all" choice (value ''). */
export function SelectFilter({
  label,
  value,
  options,
  onChange,
  all = 'All',
}: {
  label: string;
  value: string;
  options: readonly (string | { value: string; label: string })[];
  onChange: (v: string) => void;
  all?: string;
}) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">{all}</option>
        {options.map((o) => {
          const opt = typeof o === 'string' ? { value: o, label: o } : o;
          return (
            <option key={opt.value} value={opt.value}>
              {opt.label}
            </option>
          );
        })}
      </select>
    </label>
  );
}

/**
 * The free-text filter. The URL updates asynchronously (a router navigation), so an input bound straight to it
 * loses keystrokes typed fast and its caret jumps: it keeps its own draft and writes the URL after a pause (useDraft).
 */
export function SearchFilter({ value, onChange, label = 'Search' }: { value: string; onChange: (v: string) => void; label?: string }) {
  const [text, setText] = useDraft(value, onChange, undefined, 200);
  return (
    <label>
      {label}
      <input type="search" value={text} onChange={(e) => setText(e.target.value)} placeholder="Cluster or customer" />
    </label>
  );
}

/** How many rows the filters kept, for screen readers too. */
export function Count({ shown, total, what }: { shown: number; total: number; what: string }) {
  return (
    <p className="muted view-count" role="status" aria-live="polite">
      {shown === total ? `${count(total)} ${what}` : `${count(shown)} of ${count(total)} ${what}`}
    </p>
  );
}

export const uniqueSorted = (values: Iterable<string>) => [...new Set(values)].filter(Boolean).sort((a, b) => a.localeCompare(b));
