// analysis route group.
import { createGroupHandler, notImplemented } from '../shared/http/group-handler.js';
import { analysisGroup } from '../shared/routes/analysis.js';

const later = notImplemented('issue #5, scoring and dashboards');

export const handler = createGroupHandler(analysisGroup, {
  breaking: later,
  usage: later,
  upgrades: later,
});
