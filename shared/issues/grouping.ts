// How alerts become issues (rules/issue-rules.yaml). Pure and deterministic:
// the same alerts and rules always give the same issues with the same ids, so
// regrouping is idempotent and the stored triage fields stay attached.
import { createHash } from 'node:crypto';
import type { AlertRecord } from '../db/alerts.js';
import { namedSeverity } from '../fleet/severity.js';

/** What grouping reads of an alert (a regrouping reads only these: annotations run to 64 KB each). */
export const GROUPED_FIELDS = ['cluster_id', 'alert_name', 'labels', 'starts_at', 'ends_at', 'status', 'fingerprint'] as const;
export type GroupedAlert = Pick<AlertRecord, (typeof GROUPED_FIELDS)[number]>;
import type { IssueRules, Severity } from '../rules/schemas.js';
import type { IssueView } from './schemas.js';
import { wildcardFits } from '../wildcard.js';

/**
 * The fields of an issue that grouping owns (triage fields are never touched
 * here): those of the answer (schemas.ts) plus `group_key`, the values of the
 * grouping keys. `first_seen` is the start of the first alert, `last_seen` of
 * the latest, `resolved_at` when the last one resolved (once Resolved).
 */
export type IssueGrouping = Pick<
  IssueView,
  'issue_id' | 'issue_name' | 'severity' | 'status' | 'cluster_id' | 'alert_count' | 'alert_names' | 'first_seen' | 'last_seen' | 'resolved_at'
> & { group_key: string };

/** The value of one grouping key (`cluster`, `alert_name` or `label:<name>`) for an alert; '' for a missing label. */
function keyValue(alert: Pick<AlertRecord, 'cluster_id' | 'alert_name' | 'labels'>, key: string): string {
  if (key === 'cluster') return alert.cluster_id;
  if (key === 'alert_name') return alert.alert_name;
  return alert.labels[key.slice('label:'.length)] ?? '';
}

/**
 * `cluster=<id>|alert_name=<name>|label:service=<value>`: the values of the grouping keys, each `|`
 * in a value doubled. Values are any text (label values up to 1,024 characters), so a bare `|` in
 * one could forge the next key and merge unrelated alerts. Doubled, a value's pipes come in even
 * runs and a separator ends an odd one (a key name never starts with `|`), so the key reads back
 * one way. A value without `|` is written as before, keeping the ids derived from existing keys.
 */
export function groupKeyOf(alert: Pick<AlertRecord, 'cluster_id' | 'alert_name' | 'labels'>, keys: readonly string[]): string {
  return keys.map((key) => `${key}=${keyValue(alert, key).replaceAll('|', '||')}`).join('|');
}

/** A grouping key's name as the issue rules allow it (shared/rules/schemas.ts). */
const KEY_NAME = /^(cluster|alert_name|label:[A-Za-z_][A-Za-z0-9_]{0,63})$/;

/**
 * The grouping keys a group key was built with, in order: it reads back one way (above). A value
 * runs to the first odd run of pipes, whose last pipe is the separator; key names hold no `=`.
 * None when a name read back is no key name: a key written before values were escaped, whose
 * value held a bare `|` (its issue then matches no alert rather than another group's).
 */
export function keysOfGroupKey(groupKey: string): string[] {
  const keys: string[] = [];
  let at = 0;
  while (at < groupKey.length) {
    const eq = groupKey.indexOf('=', at);
    if (eq < 0) break;
    keys.push(groupKey.slice(at, eq));
    let next = -1;
    for (let i = eq + 1; i < groupKey.length && next < 0; ) {
      if (groupKey[i] !== '|') {
        i++;
        continue;
      }
      let run = 0;
      while (groupKey[i + run] === '|') run++;
      if (run % 2 === 1) next = i + run;
      i += run;
    }
    if (next < 0) break;
    at = next;
  }
  return keys.every((k) => KEY_NAME.test(k)) && new Set(keys).size === keys.length ? keys : [];
}

/** Whether an alert name fits a severity pattern: globs separated by `|`, case-insensitive. */
export function nameFits(pattern: string, name: string): boolean {
  const lower = name.toLowerCase();
  return pattern
    .toLowerCase()
    .split('|')
    .some((glob) => wildcardFits(glob, lower, '*', '?'));
}

/** First matching name pattern; else the severity label when it names Critical or Warning; else the default. */
export function alertSeverity(alert: GroupedAlert, rules: IssueRules['severity']): Severity {
  return patternSeverity(alert.alert_name, rules) ?? labelSeverity(alert, rules);
}

/** The severity of the first name pattern `name` fits; undefined when it fits none. */
function patternSeverity(name: string, rules: IssueRules['severity']): Severity | undefined {
  for (const p of rules.patterns) if (nameFits(p.match, name)) return p.severity;
  return undefined;
}

/** The severity label's value as the alert's own record reads it (critical, page, error, high; warning, warn, medium). */
function labelSeverity(alert: GroupedAlert, rules: IssueRules['severity']): Severity {
  return (rules.label ? namedSeverity(alert.labels[rules.label]) : undefined) ?? rules.default;
}

/**
 * alertSeverity with each alert name matched against the patterns once. A pass sees a cluster's alerts of 30
 * days, mostly the same few names, and 50 patterns of 200 characters against a 1,024-character name took 0.2 s.
 */
function severityByName(rules: IssueRules['severity']): (alert: GroupedAlert) => Severity {
  const byName = new Map<string, Severity | null>();
  return (alert) => {
    let severity = byName.get(alert.alert_name);
    if (severity === undefined) byName.set(alert.alert_name, (severity = patternSeverity(alert.alert_name, rules) ?? null));
    return severity ?? labelSeverity(alert, rules);
  };
}

/** Stable id of the issue a group's segment forms: its key and its first alert. */
export function issueIdOf(groupKey: string, first: GroupedAlert): string {
  const digest = createHash('sha256').update(`${groupKey}\n${first.starts_at}\n${first.fingerprint}`).digest('hex');
  return `iss-${digest.slice(0, 20)}`;
}

/** "A, B and 3 more (service=api)": the names, then the grouping labels' values, from a member alert rather than parsed back from the key. */
function nameOf(names: readonly string[], member: GroupedAlert, keys: readonly string[]): string {
  const base = names.length <= 2 ? names.join(', ') : `${names[0]}, ${names[1]} and ${names.length - 2} more`;
  const labels = keys.filter((k) => k.startsWith('label:')).map((k) => `${k.slice('label:'.length)}=${keyValue(member, k)}`);
  return labels.length ? `${base} (${labels.join(', ')})` : base;
}

const byStart = (a: GroupedAlert, b: GroupedAlert) =>
  a.starts_at < b.starts_at ? -1 : a.starts_at > b.starts_at ? 1 : a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0;

/**
 * Groups alerts (any order, any clusters) into issues. Within a group, alerts
 * sorted by start form one issue while each starts at most the join window
 * after the issue's activity (the latest resolution so far; unbounded while
 * one fires). An issue is Ongoing while an alert fires or until the quiet
 * period after its last resolution has passed.
 */
export function groupAlerts(alerts: readonly GroupedAlert[], rules: IssueRules, now: Date): IssueGrouping[] {
  const groups = new Map<string, GroupedAlert[]>();
  for (const alert of alerts) {
    const key = groupKeyOf(alert, rules.grouping.keys);
    const list = groups.get(key);
    if (list) list.push(alert);
    else groups.set(key, [alert]);
  }
  const windowMs = rules.grouping.join_window_minutes * 60_000;
  const quietMs = rules.resolution.quiet_minutes * 60_000;
  const issues: IssueGrouping[] = [];
  const severityOf = severityByName(rules.severity);
  for (const [groupKey, members] of groups) {
    members.sort(byStart);
    let segment: GroupedAlert[] = [];
    let activityEnd = -Infinity;
    const close = () => {
      if (segment.length) issues.push(segmentIssue(groupKey, segment, activityEnd, rules, now, quietMs, severityOf));
    };
    for (const alert of members) {
      if (segment.length && Date.parse(alert.starts_at) > activityEnd + windowMs) {
        close();
        segment = [];
        activityEnd = -Infinity;
      }
      segment.push(alert);
      activityEnd = Math.max(activityEnd, endOf(alert));
    }
    close();
  }
  return issues.sort((a, b) => (a.first_seen < b.first_seen ? -1 : a.first_seen > b.first_seen ? 1 : a.issue_id < b.issue_id ? -1 : 1));
}

/** When an alert stopped: its end, or never while it fires. */
function endOf(alert: GroupedAlert): number {
  if (alert.status === 'Firing') return Infinity;
  return Math.max(Date.parse(alert.ends_at ?? alert.starts_at), Date.parse(alert.starts_at));
}

/**
 * The alert names an issue keeps, in order of first appearance; its name counts them all. Grouped by
 * cluster alone, one issue could gather thousands, and the issue is one DynamoDB item (400 KB at most).
 */
export const ALERT_NAMES_KEPT = 50;

function segmentIssue(
  groupKey: string,
  alerts: GroupedAlert[],
  activityEnd: number,
  rules: IssueRules,
  now: Date,
  quietMs: number,
  severityOf: (alert: GroupedAlert) => Severity,
): IssueGrouping {
  const first = alerts[0]!;
  const names = [...new Set(alerts.map((a) => a.alert_name))];
  const resolved = activityEnd !== Infinity && now.getTime() - activityEnd >= quietMs;
  return {
    issue_id: issueIdOf(groupKey, first),
    group_key: groupKey,
    issue_name: nameOf(names, first, rules.grouping.keys),
    severity: alerts.some((a) => severityOf(a) === 'Critical') ? 'Critical' : 'Warning',
    status: resolved ? 'Resolved' : 'Ongoing',
    cluster_id: first.cluster_id,
    alert_count: alerts.length,
    alert_names: names.slice(0, ALERT_NAMES_KEPT),
    first_seen: first.starts_at,
    last_seen: alerts.at(-1)!.starts_at,
    resolved_at: resolved ? new Date(activityEnd).toISOString() : null,
  };
}
