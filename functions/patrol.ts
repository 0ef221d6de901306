// patrol route group: reports, KPIs, and the trigger (one scan at a time).
import { callerOf } from '../shared/auth/caller.js';
import { createGroupHandler } from '../shared/http/group-handler.js';
import { Reply } from '../shared/http/route.js';
import { latestReport, listReports, patrolKpis, reportDetail } from '../shared/patrol/queries.js';
import { triggerPatrol } from '../shared/patrol/trigger.js';
import { patrolGroup } from '../shared/routes/patrol.js';

export const handler = createGroupHandler(patrolGroup, {
  list: async (req) => listReports(req.query),
  latest: async () => latestReport(),
  kpis: async () => patrolKpis(),
  get: async (req) => reportDetail(req.params.report_id),
  trigger: async (req) => {
    const answer = await triggerPatrol(req.principal, req.body.report_type, await callerOf(req));
    // Still running after the wait: 202, and the client polls the report.
    return answer.status === 'running' ? new Reply(202, answer) : answer;
  },
});
