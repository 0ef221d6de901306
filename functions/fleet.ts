// fleet route group.
import { createGroupHandler, notImplemented } from '../shared/http/group-handler.js';
import { fleetGroup } from '../shared/routes/fleet.js';

const later = notImplemented('issue #5, scoring and dashboards');

export const handler = createGroupHandler(fleetGroup, {
  scores: later,
  kpis: later,
  critical: later,
  rules: later,
  refresh: later,
});
