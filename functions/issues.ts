// issues route group: rule-grouped alert issues, their triage and tickets.
import { callerOf } from '../shared/auth/caller.js';
import { createGroupHandler } from '../shared/http/group-handler.js';
import { assignableUsers, clusterHistory, issueDetail, issueEvidence, issueKpis, listIssues } from '../shared/issues/queries.js';
import { createTicket, updateTriage } from '../shared/issues/triage.js';
import { expectedTriage } from '../shared/issues/triage-etag.js';
import { issuesGroup } from '../shared/routes/issues.js';

export const handler = createGroupHandler(issuesGroup, {
  list: async (req) => listIssues(req.principal, req.query),
  kpis: async (req) => issueKpis(req.query.days),
  users: async () => assignableUsers(),
  get: async (req) => issueDetail(req.params.issue_id),
  clusterHistory: async (req) => clusterHistory(req.params.issue_id),
  evidence: async (req) => issueEvidence(req.params.issue_id),
  createTicket: async (req) =>
    createTicket(req.principal, req.params.issue_id, await callerOf(req), new Date(), { again: req.query.again === 'true', receivedAt: req.receivedAt }),
  patch: async (req) => updateTriage(req.principal, req.params.issue_id, req.body, await callerOf(req), undefined, expectedTriage(req.headers['if-match'])),
});
