// LLM usage reports (spec §4 LLM usage): the ledger summed by day, source and
// model, by model, and the price list. Runs are counted by run id: a chat
// message that called the model five times is one run.
import { agentBudgetSettings } from '../config/agent-budget.js';
import { listUsageRuns, type UsageRun } from '../db/llm-usage.js';
import { priceOf, pricingTable } from './pricing.js';

export const SOURCE = 'live' as const; // spec §1: data computed from live data

const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places;

interface Sums {
  runs: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cost_usd: number;
  avg_duration_s: number;
  errors: number;
}

/** Adds up run sums (the ledger's, shared/db/llm-usage.ts): runs by distinct run id, duration as the mean of each run's total call time. */
function sum(parts: readonly UsageRun[]): Sums {
  const runs = new Map<string, { ms: number; error: boolean }>();
  const totals = { input_tokens: 0, output_tokens: 0, total_tokens: 0, cost_usd: 0 };
  for (const c of parts) {
    totals.input_tokens += c.input_tokens;
    totals.output_tokens += c.output_tokens;
    totals.total_tokens += c.total_tokens;
    totals.cost_usd += c.cost_usd;
    const run = runs.get(c.run_id) ?? { ms: 0, error: false };
    run.ms += c.duration_ms;
    run.error ||= c.error;
    runs.set(c.run_id, run);
  }
  const durations = [...runs.values()].map((r) => r.ms);
  return {
    runs: runs.size,
    ...totals,
    cost_usd: round(totals.cost_usd, 6),
    avg_duration_s: durations.length ? round(durations.reduce((a, b) => a + b, 0) / durations.length / 1000, 2) : 0,
    errors: [...runs.values()].filter((r) => r.error).length,
  };
}

function groupBy<K extends string>(parts: readonly UsageRun[], key: (c: UsageRun) => K): Map<K, UsageRun[]> {
  const groups = new Map<K, UsageRun[]>();
  for (const c of parts) {
    const k = key(c);
    const list = groups.get(k);
    if (list) list.push(c);
    else groups.set(k, [c]);
  }
  return groups;
}

/**
 * The days the period's cost was spent over, for the monthly projection: from the later of the period's first
 * day and the ledger's first day in it, to now (today counting as the part of it gone), at least one day. The
 * whole period as the divisor made a deployment 3 days old project a tenth of its rate, and every period run
 * short early in a UTC day; one day at least, so an hour's cost is not multiplied by 720.
 */
export function projectionDays(days: number, now: Date, parts: readonly Pick<UsageRun, 'day'>[]): number {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  let from = today - (days - 1) * 86_400_000;
  let first: string | undefined;
  for (const p of parts) if (first === undefined || p.day < first) first = p.day;
  if (first !== undefined) from = Math.max(from, Date.parse(`${first}T00:00:00Z`));
  return Math.max(1, (now.getTime() - from) / 86_400_000);
}

export async function usageSummary(days: number, now = new Date()) {
  const [parts, prices] = await Promise.all([listUsageRuns(days, now), pricingTable()]);
  // As the calls were costed (a price added since does not re-cost them), or, for answered calls recorded before that was
  // kept, by today's list. A failed call the provider billed says so itself (unpriced set); other failed calls cost nothing.
  const unpriced = [...new Set(parts.filter((c) => c.unpriced ?? (c.answered && !priceOf(prices, c.model))).map((c) => c.model))].sort();
  const daily = [...groupBy(parts, (c) => `${c.day}\n${c.source}\n${c.model}`)].map(([key, group]) => {
    const [day, source, model] = key.split('\n') as [string, UsageRun['source'], string];
    return { day, source, model, ...sum(group) };
  });
  daily.sort((a, b) => (a.day < b.day ? 1 : a.day > b.day ? -1 : a.source < b.source ? -1 : a.source > b.source ? 1 : a.model < b.model ? -1 : 1));
  const all = sum(parts);
  return {
    period_days: days,
    daily_usage: daily,
    totals: {
      runs: all.runs,
      input_tokens: all.input_tokens,
      output_tokens: all.output_tokens,
      total_tokens: all.total_tokens,
      cost_usd: all.cost_usd,
      avg_cost_per_run: all.runs ? round(all.cost_usd / all.runs, 6) : 0,
      errors: all.errors,
    },
    monthly_projection_usd: round((all.cost_usd / projectionDays(days, now, parts)) * 30, 6),
    /** Models with calls in the period but no price: their cost counts as 0. */
    unpriced_models: unpriced,
    /** The AI workers' day against their daily budget (agent-budget.ts): today is in every period. */
    agent_budget: { daily_usd: agentBudgetSettings().dailyUsd, spent_today_usd: round(agentCostOn(parts, now), 6) },
    source: SOURCE,
    generated_at: now.toISOString(),
  };
}

export async function usageByModel(days: number, now = new Date()) {
  const parts = await listUsageRuns(days, now);
  const rows = [...groupBy(parts, (c) => c.model)].map(([model, group]) => {
    const { errors: _errors, ...s } = sum(group);
    return { model, ...s };
  });
  rows.sort((a, b) => b.cost_usd - a.cost_usd || (a.model < b.model ? -1 : 1));
  return { by_model: rows, source: SOURCE, generated_at: now.toISOString() };
}

/** The contract's price rows (model, input_per_mtok, output_per_mtok): the cache rates are ours, for the ledger's costs. */
export async function pricing() {
  return { pricing: (await pricingTable()).map(({ model, input_per_mtok, output_per_mtok }) => ({ model, input_per_mtok, output_per_mtok })) };
}

/** What the agents' runs (the patrol, investigations, AI grouping: the ledger's `agent` source) among `runs` cost on `now`'s UTC day. */
const agentCostOn = (runs: readonly UsageRun[], now: Date) => {
  const day = now.toISOString().slice(0, 10);
  return runs.filter((r) => r.source === 'agent' && r.day === day).reduce((total, r) => total + r.cost_usd, 0);
};

/**
 * What the agents' calls of `now`'s UTC day cost so far, in USD: the day's AI budget's spend (agent-budget.ts), as the
 * summary's `agent_budget` counts it. Read as the reports read the ledger (new calls only, once this container has read the day).
 */
export async function agentSpentToday(now = new Date()): Promise<number> {
  return agentCostOn(await listUsageRuns(1, now), now);
}
