// risk route group: risk snapshots and the risk rules in force.
import { createGroupHandler } from '../shared/http/group-handler.js';
import { riskGroup } from '../shared/routes/risk.js';
import { loadRiskRules } from '../shared/rules/load.js';
import { viewAnswer } from '../shared/scoring/fleet-view.js';
import { riskSummary, rulesTable } from '../shared/scoring/risk.js';

export const handler = createGroupHandler(riskGroup, {
  snapshots: viewAnswer(
    'risk.snapshots',
    'live',
    (view) => ({ clusters: view.snapshots, summary: riskSummary(view.snapshots) }),
    (view, id) => {
      const clusters = view.snapshots.filter((s) => s.cluster_id === id);
      return { clusters, summary: riskSummary(clusters) };
    },
  ),
  rulesTable: async () => rulesTable((await loadRiskRules()).rules),
});
