// The words an alert's severity label uses for Critical and Warning. Alerts are stored with the
// severity they name (ingest.ts) and grouped into issues by it (shared/issues/grouping.ts): one
// list, so a `severity: page` alert is Critical in its issue as it is in the alert's own record.

const CRITICAL = new Set(['critical', 'page', 'error', 'high']);
const WARNING = new Set(['warning', 'warn', 'medium']);

/** The severity a label's value names, in any case and without surrounding spaces; undefined when it names neither. */
export function namedSeverity(label: string | undefined): 'Critical' | 'Warning' | undefined {
  const s = (label ?? '').trim().toLowerCase();
  return CRITICAL.has(s) ? 'Critical' : WARNING.has(s) ? 'Warning' : undefined;
}
