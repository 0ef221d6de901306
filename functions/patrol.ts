// patrol route group.
import { createGroupHandler, notImplemented } from '../shared/http/group-handler.js';
import { patrolGroup } from '../shared/routes/patrol.js';

const later = notImplemented('issue #9, patrol');

export const handler = createGroupHandler(patrolGroup, {
  list: later,
  latest: later,
  kpis: later,
  get: later,
  trigger: later,
});
