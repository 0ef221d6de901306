// The day's AI budget (shared/llm/agent-budget.ts) spent, for a test: AGENT_DAILY_BUDGET_USD a cent above
// what the agents spent today, then a ledger row of two cents; the variable is unset again afterwards.
import { recordUsage } from '../../shared/db/llm-usage.js';
import type { BudgetSpent } from '../../shared/llm/agent-budget.js';
import { agentSpentToday } from '../../shared/llm/usage.js';

export async function withAgentBudgetSpent<T>(run: (spent: BudgetSpent) => Promise<T>): Promise<T> {
  const before = await agentSpentToday();
  const spent = { budgetUsd: before + 0.01, spentUsd: before + 0.02 };
  process.env.AGENT_DAILY_BUDGET_USD = spent.budgetUsd.toFixed(6);
  try {
    await recordUsage({
      run_id: `budget-spent-${Date.now()}`,
      source: 'agent',
      model: 'gpt-4o-mini',
      input_tokens: 1,
      output_tokens: 1,
      total_tokens: 2,
      cost_usd: 0.02,
      duration_ms: 1,
      error: false,
      user: 'agent-worker',
    });
    return await run(spent);
  } finally {
    delete process.env.AGENT_DAILY_BUDGET_USD;
  }
}
