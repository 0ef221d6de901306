// investigations route group: the agent's investigations, their KPIs, and the open agent tasks.
import { investigationDetail, investigationKpis, listInvestigations, pendingTasks } from '../shared/agents/queries.js';
import { createGroupHandler } from '../shared/http/group-handler.js';
import { investigationsGroup } from '../shared/routes/investigations.js';

export const handler = createGroupHandler(investigationsGroup, {
  list: async (req) => listInvestigations(req.query),
  kpis: async (req) => investigationKpis(req.query),
  pendingTasks: async () => pendingTasks(),
  get: async (req) => investigationDetail(req.params.investigation_id),
});
