// risk route group: risk snapshots and the risk rules in force.
import { createGroupHandler } from '../shared/http/group-handler.js';
import { riskGroup } from '../shared/routes/risk.js';
import { loadRiskRules } from '../shared/rules/load.js';
import { fleetView, preparedAnswer } from '../shared/scoring/fleet-view.js';
import { riskSummary, rulesTable } from '../shared/scoring/risk.js';

export const handler = createGroupHandler(riskGroup, {
  snapshots: async () => {
    const view = await fleetView();
    return preparedAnswer(view, 'risk.snapshots', () => ({
      clusters: view.snapshots,
      summary: riskSummary(view.snapshots),
      source: 'live',
      generated_at: view.generatedAt,
    }));
  },
  rulesTable: async () => rulesTable((await loadRiskRules()).rules),
});
