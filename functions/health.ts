// health route group.
import { createGroupHandler, notImplemented } from '../shared/http/group-handler.js';
import { healthGroup } from '../shared/routes/health.js';

const later = notImplemented('issue #5, scoring and dashboards');

export const handler = createGroupHandler(healthGroup, {
  scores: later,
  kpis: later,
  enrichment: later,
  refresh: later,
});
