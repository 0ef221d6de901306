// The day's AI budget of the patrol, the investigations and AI grouping (AGENT_DAILY_BUDGET_USD): what
// their model calls (the ledger's `agent` source) cost this UTC day, read from the ledger itself. Past
// it, each runs as it does without a provider (its rules engine) until 00:00 UTC, and says why. It is
// checked as a run starts, so a run under way ends as it began: the day may close a run's cost over it.
import { llmSettings } from '../config/llm.js';
import { listUsageRuns } from '../db/llm-usage.js';
import { llmProvider } from './provider.js';
import type { LlmProvider } from './types.js';

/** The budget, and what the day's agent calls cost (at least the budget, when it stopped the model). */
export interface BudgetSpent {
  budgetUsd: number;
  spentUsd: number;
}

/** What the agent calls of `now`'s UTC day cost so far, in USD (from this container's reading of the ledger: new calls only, once read). */
export async function agentSpentToday(now = new Date()): Promise<number> {
  const today = now.toISOString().slice(0, 10);
  const runs = await listUsageRuns(1, now);
  return runs.filter((r) => r.source === 'agent' && r.day === today).reduce((sum, r) => sum + r.cost_usd, 0);
}

/** The model an AI worker may call now: none when no provider is configured, or when the day's budget is spent (`spent` then says so). */
export async function agentProvider(now = new Date()): Promise<{ provider: LlmProvider | null; spent?: BudgetSpent }> {
  const provider = llmProvider();
  if (!provider) return { provider: null };
  const budgetUsd = llmSettings().agentDailyBudgetUsd;
  if (budgetUsd === 0) return { provider };
  const spentUsd = await agentSpentToday(now);
  return spentUsd >= budgetUsd ? { provider: null, spent: { budgetUsd, spentUsd } } : { provider };
}

/** Why a rules-engine report or grouping ran though a provider is configured. */
export const budgetSpentWords = ({ budgetUsd, spentUsd }: BudgetSpent) =>
  `the day's AI budget is spent (US$${spentUsd.toFixed(2)} of AGENT_DAILY_BUDGET_USD's US$${budgetUsd.toFixed(2)}; the model is asked again after 00:00 UTC)`;
