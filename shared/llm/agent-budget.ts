// The day's AI budget of the patrol, the investigations and AI grouping (AGENT_DAILY_BUDGET_USD): what
// their model calls (the ledger's `agent` source) cost this UTC day, read from the ledger itself. Past
// it, each runs as it does without a provider (its rules engine) until 00:00 UTC, and says why. It is
// checked as a run starts, so a run under way ends as it began: the day may close a run's cost over it.
import { agentBudgetSettings } from '../config/agent-budget.js';
import { llmProvider } from './provider.js';
import type { LlmProvider } from './types.js';
import { agentSpentToday } from './usage.js';

/** The budget, and what the day's agent calls cost (at least the budget, when it stopped the model). */
export interface BudgetSpent {
  budgetUsd: number;
  spentUsd: number;
}

/** The model an AI worker may call now: none when no provider is configured, or when the day's budget is spent (`spent` then says so). */
export async function agentProvider(now = new Date()): Promise<{ provider: LlmProvider | null; spent?: BudgetSpent }> {
  const provider = llmProvider();
  if (!provider) return { provider: null };
  const budgetUsd = agentBudgetSettings().dailyUsd;
  if (budgetUsd === 0) return { provider };
  const spentUsd = await agentSpentToday(now);
  return spentUsd >= budgetUsd ? { provider: null, spent: { budgetUsd, spentUsd } } : { provider };
}

/** Why a rules-engine report or grouping ran though a provider is configured. */
export const budgetSpentWords = ({ budgetUsd, spentUsd }: BudgetSpent) =>
  `the day's AI budget is spent (US$${spentUsd.toFixed(2)} of AGENT_DAILY_BUDGET_USD's US$${budgetUsd.toFixed(2)}; the model is asked again after 00:00 UTC)`;
