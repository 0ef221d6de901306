// critical-clusters route group: the most severe clusters with their alerts.
import { createGroupHandler } from '../shared/http/group-handler.js';
import { criticalClustersGroup } from '../shared/routes/critical-clusters.js';
import { criticalClusters } from '../shared/scoring/critical.js';
import { fleetView, preparedAnswer } from '../shared/scoring/fleet-view.js';

export const handler = createGroupHandler(criticalClustersGroup, {
  list: async () => {
    const view = await fleetView();
    return preparedAnswer(view, 'critical-clusters', () => ({
      ...criticalClusters(view.fleet, view.snapshots, view.scores, view.health.rules, view.now),
      generated_at: view.generatedAt,
    }));
  },
});
