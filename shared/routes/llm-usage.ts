import * as z from '../zod.js';
import { SUPERADMIN } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { DaysInRange } from './days.js';

const DaysQuery = z.lazy(() => z.object({ days: DaysInRange(30) }));

// Answers (spec §2 LLM usage, §4).
const Int = z.int();
const Count = z.count();
const Sums = { runs: Count, input_tokens: Count, output_tokens: Count, total_tokens: Count, cost_usd: z.number(), avg_duration_s: z.number() };
const Stamp = { source: z.literal('live'), generated_at: z.string() }; // spec §1: data computed from live data
const SummaryAnswer = z.lazy(() =>
  z.object({
    period_days: Int,
    daily_usage: z.array(z.object({ day: z.string(), source: z.enum(['chat', 'agent']), model: z.string(), ...Sums, errors: Count })),
    totals: z.object({
      runs: Count,
      input_tokens: Count,
      output_tokens: Count,
      total_tokens: Count,
      cost_usd: z.number(),
      avg_cost_per_run: z.number(),
      errors: Count,
    }),
    monthly_projection_usd: z.number(),
    unpriced_models: z.array(z.string()),
    /**
     * Beyond the contract: what the patrol, investigations and AI grouping spent this UTC day, and their daily budget
     * (AGENT_DAILY_BUDGET_USD, 0: none); reached, they run their rules engines until 00:00 UTC.
     */
    agent_budget: z.object({ daily_usd: z.number(), spent_today_usd: z.number() }),
    ...Stamp,
  }),
);
const ByModelAnswer = z.lazy(() => z.object({ by_model: z.array(z.object({ model: z.string(), ...Sums })), ...Stamp }));
const PricingAnswer = z.lazy(() => z.object({ pricing: z.array(z.object({ model: z.string(), input_per_mtok: z.number(), output_per_mtok: z.number() })) }));

export const llmUsageGroup = defineGroup({
  name: 'llm-usage',
  config: ['llm-pricing', 'agent-budget'],
  tables: { users: 'read', 'llm-usage': 'read' },
  routes: {
    summary: {
      method: 'GET',
      path: '/api/llm-usage/summary',
      summary: 'Daily LLM usage and totals',
      auth: 'user',
      roles: SUPERADMIN,
      // A wrong price list (LLM_PRICING) is the operator's to mend: 503 naming it (shared/llm/pricing.ts).
      problems: [503],
      query: DaysQuery,
      response: SummaryAnswer,
    },
    byModel: {
      method: 'GET',
      path: '/api/llm-usage/by-model',
      summary: 'LLM usage by model',
      auth: 'user',
      roles: SUPERADMIN,
      // A wrong price list (LLM_PRICING) is the operator's to mend: 503 naming it (shared/llm/pricing.ts).
      problems: [503],
      query: DaysQuery,
      response: ByModelAnswer,
    },
    pricing: {
      method: 'GET',
      path: '/api/llm-usage/pricing',
      summary: 'Model prices per million tokens',
      auth: 'user',
      roles: SUPERADMIN,
      // A wrong price list (LLM_PRICING) is the operator's to mend: 503 naming it (shared/llm/pricing.ts).
      problems: [503],
      response: PricingAnswer,
    },
  },
});
