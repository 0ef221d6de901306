// ai-issues route group: AI-grouped alert issues and their triage.
import { aiIssueDetail, aiIssueKpis, listAiIssues, updateAiTriage } from '../shared/ai-issues/queries.js';
import { callerOf } from '../shared/auth/caller.js';
import { createGroupHandler } from '../shared/http/group-handler.js';
import { assignableUsers } from '../shared/issues/queries.js';
import { expectedTriage } from '../shared/issues/triage-etag.js';
import { aiIssuesGroup } from '../shared/routes/ai-issues.js';

export const handler = createGroupHandler(aiIssuesGroup, {
  list: async (req) => listAiIssues(req.principal, req.query),
  kpis: async (req) => aiIssueKpis(req.query.days),
  users: async () => assignableUsers(),
  get: async (req) => aiIssueDetail(req.params.issue_id),
  patch: async (req) => updateAiTriage(req.principal, req.params.issue_id, req.body, await callerOf(req), undefined, expectedTriage(req.headers['if-match'])),
});
