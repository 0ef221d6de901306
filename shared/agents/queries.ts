// Reading investigations and open agent tasks (spec §4 Investigations): the
// filtered, paged list (without full reports), the KPIs, the pending/running
// tasks, one investigation. Lists read one time range of the index, never a scan,
// and of each investigation in it only its figures: the free texts only for the page.
import {
  countOpenTasks,
  getInvestigation,
  investigationSummaries,
  listInvestigationFiguresSince,
  listOpenTasks,
  type AgentTask,
  type InvestigationFigures,
  type InvestigationSummary,
} from '../db/investigations.js';
import { NotFound } from '../http/errors.js';
import { wildcardFits } from '../wildcard.js';
import type { AgentTaskView } from './schemas.js';

export const SOURCE = 'live' as const; // spec §1: data computed from live data
/** Open tasks shown at most (spec §8). */
export const PENDING_TASKS_SHOWN = 50;
const DAY_MS = 86_400_000;

const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places;

/**
 * SQL LIKE, case-insensitive, as a substring match: `%` any run of characters, `_` any one.
 * Matched by `wildcardFits`, not a regular expression: `%%%%%%%%%%%%%%%%%%%%#` made one that
 * backtracked for a minute per name.
 */
export function likeMatcher(pattern: string): (value: string) => boolean {
  const whole = `%${pattern.trim().toLowerCase()}%`;
  return (value) => wildcardFits(whole, value.toLowerCase(), '%', '_');
}

const listItem = (i: InvestigationSummary): InvestigationSummary => ({
  investigation_id: i.investigation_id,
  task_id: i.task_id,
  cluster_id: i.cluster_id,
  cluster_name: i.cluster_name,
  customer_name: i.customer_name,
  severity: i.severity,
  confidence: i.confidence,
  root_cause: i.root_cause,
  recommended_actions: i.recommended_actions,
  model: i.model,
  input_tokens: i.input_tokens,
  output_tokens: i.output_tokens,
  total_tokens: i.total_tokens,
  cost_usd: i.cost_usd,
  duration_seconds: i.duration_seconds,
  created_at: i.created_at,
});

export async function listInvestigations(
  q: { days: number; severity: string; customer: string; cluster_id: string; page: number; page_size: number },
  now = new Date(),
) {
  const matches = q.customer.trim() ? likeMatcher(q.customer) : () => true;
  const found = (await listInvestigationFiguresSince(new Date(now.getTime() - q.days * DAY_MS))).filter(
    (i) => (!q.severity || i.severity === q.severity) && (!q.cluster_id || i.cluster_id === q.cluster_id) && matches(i.customer_name),
  );
  const start = (q.page - 1) * q.page_size;
  const page = await investigationSummaries(found.slice(start, start + q.page_size));
  return {
    investigations: page.map(listItem),
    total: found.length,
    page: q.page,
    page_size: q.page_size,
    source: SOURCE,
    generated_at: now.toISOString(),
  };
}

export async function investigationKpis(q: { days: number }, now = new Date()) {
  const all = await listInvestigationFiguresSince(new Date(now.getTime() - q.days * DAY_MS));
  const count = (severity: string) => all.filter((i) => i.severity === severity).length;
  const mean = (f: (i: InvestigationFigures) => number) => (all.length ? all.reduce((s, i) => s + f(i), 0) / all.length : 0);
  return {
    total_investigations: all.length,
    critical_count: count('critical'),
    warning_count: count('warning'),
    info_count: count('info'),
    total_tokens: all.reduce((s, i) => s + i.total_tokens, 0),
    avg_confidence: round(
      mean((i) => i.confidence),
      3,
    ),
    avg_duration_s: round(
      mean((i) => i.duration_seconds),
      2,
    ),
    total_cost_usd: round(
      all.reduce((s, i) => s + i.cost_usd, 0),
      6,
    ),
    source: SOURCE,
    generated_at: now.toISOString(),
  };
}

const taskItem = (t: AgentTask): AgentTaskView => ({
  task_id: t.task_id,
  cluster_id: t.cluster_id,
  cluster_name: t.cluster_name,
  customer_name: t.customer_name,
  customer_tier: t.customer_tier,
  trigger_reason: t.trigger_reason,
  priority: t.priority,
  status: t.status as AgentTaskView['status'],
  created_at: t.created_at,
  attempts: t.attempts,
  last_error: t.last_error ?? null,
  claimed_at: t.claimed_at ?? null,
});

/** Pending and running tasks, most urgent first; `total` counts them all (a task per cluster: thousands in an outage), reading only the shown ones whole. */
export async function pendingTasks(now = new Date()) {
  const [first, total] = await Promise.all([listOpenTasks(PENDING_TASKS_SHOWN), countOpenTasks()]);
  // The open-task partition holds only pending and running tasks; the filter guards a stale index entry.
  const open = first.filter((t) => t.status === 'pending' || t.status === 'running');
  return { tasks: open.map(taskItem), total: Math.max(total, open.length), source: SOURCE, generated_at: now.toISOString() };
}

export async function investigationDetail(investigationId: string) {
  const investigation = await getInvestigation(investigationId);
  if (!investigation) throw new NotFound(`No investigation ${investigationId}.`);
  return investigation;
}
