// ai-issues route group.
import { createGroupHandler, notImplemented } from '../shared/http/group-handler.js';
import { aiIssuesGroup } from '../shared/routes/ai-issues.js';

const later = notImplemented('issue #10, AI-grouped issues');

export const handler = createGroupHandler(aiIssuesGroup, {
  list: later,
  kpis: later,
  users: later,
  get: later,
  patch: later,
});
