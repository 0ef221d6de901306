// llm-usage route group.
import { createGroupHandler, notImplemented } from '../shared/http/group-handler.js';
import { llmUsageGroup } from '../shared/routes/llm-usage.js';

const later = notImplemented('issue #8, LLM usage');

export const handler = createGroupHandler(llmUsageGroup, {
  summary: later,
  byModel: later,
  pricing: later,
});
