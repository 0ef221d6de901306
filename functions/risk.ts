// risk route group.
import { createGroupHandler, notImplemented } from '../shared/http/group-handler.js';
import { riskGroup } from '../shared/routes/risk.js';

const later = notImplemented('issue #5, scoring and dashboards');

export const handler = createGroupHandler(riskGroup, {
  snapshots: later,
  rulesTable: later,
});
