// llm-usage route group (superadmin only, by the route table): the usage ledger's reports and the price list.
import { createGroupHandler } from '../shared/http/group-handler.js';
import { pricing, usageByModel, usageSummary } from '../shared/llm/usage.js';
import { llmUsageGroup } from '../shared/routes/llm-usage.js';

export const handler = createGroupHandler(llmUsageGroup, {
  summary: async (req) => usageSummary(req.query.days),
  byModel: async (req) => usageByModel(req.query.days),
  pricing: async () => pricing(),
});
