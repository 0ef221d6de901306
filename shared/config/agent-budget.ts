// What the AI workers (the patrol, the investigations, AI grouping) may spend a UTC day together
// (shared/llm/agent-budget.ts). A concern of its own, apart from `llm`: the scrape reports it
// beside the day's spend, and needs neither the provider's settings nor its key.
//
//   AGENT_DAILY_BUDGET_USD  optional, default 50 (0: none), at most 100,000
import { defineSettings, usdBudget } from './env.js';

/**
 * An alert storm makes an investigation per troubled cluster and a grouping call per cluster whose alerts moved,
 * every pass: without a bound, a noisy day's bill has none either.
 */
const DEFAULT_AGENT_BUDGET_USD = 50;

export const agentBudgetSettings = defineSettings(
  'agent-budget',
  () => ({ AGENT_DAILY_BUDGET_USD: usdBudget('AGENT_DAILY_BUDGET_USD', DEFAULT_AGENT_BUDGET_USD) }),
  { derive: (v) => ({ dailyUsd: v.AGENT_DAILY_BUDGET_USD }) },
);
