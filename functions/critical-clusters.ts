// critical-clusters route group: the most severe clusters with their alerts.
import { createGroupHandler } from '../shared/http/group-handler.js';
import { criticalClustersGroup } from '../shared/routes/critical-clusters.js';
import { criticalClusters } from '../shared/scoring/critical.js';
import { viewAnswer } from '../shared/scoring/fleet-view.js';

export const handler = createGroupHandler(criticalClustersGroup, {
  // The contract's answer has no `source`.
  list: viewAnswer('critical-clusters', null, (view) => criticalClusters(view.fleet, view.snapshots, view.scores, view.health.rules, view.now)),
});
