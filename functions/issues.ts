// issues route group.
import { createGroupHandler, notImplemented } from '../shared/http/group-handler.js';
import { issuesGroup } from '../shared/routes/issues.js';

const later = notImplemented('issue #7, alert issues');

export const handler = createGroupHandler(issuesGroup, {
  list: later,
  kpis: later,
  users: later,
  get: later,
  clusterHistory: later,
  evidence: later,
  createTicket: later,
  patch: later,
});
