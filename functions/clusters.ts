// clusters route group: one cluster's inventory and daily metric rollups (the console's cluster page).
import { clusterInventory, clusterMetrics } from '../shared/fleet/cluster-detail.js';
import { createGroupHandler } from '../shared/http/group-handler.js';
import { clustersGroup } from '../shared/routes/clusters.js';

export const handler = createGroupHandler(clustersGroup, {
  get: async ({ params }) => ({ cluster: await clusterInventory(params.cluster_id) }),
  metrics: async ({ params, query }) => clusterMetrics(params.cluster_id, query.days),
});
