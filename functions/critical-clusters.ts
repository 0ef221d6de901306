// critical-clusters route group.
import { createGroupHandler, notImplemented } from '../shared/http/group-handler.js';
import { criticalClustersGroup } from '../shared/routes/critical-clusters.js';

const later = notImplemented('issue #5, scoring and dashboards');

export const handler = createGroupHandler(criticalClustersGroup, {
  list: later,
});
