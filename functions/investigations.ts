// investigations route group.
import { createGroupHandler, notImplemented } from '../shared/http/group-handler.js';
import { investigationsGroup } from '../shared/routes/investigations.js';

const later = notImplemented('issue #10, investigations');

export const handler = createGroupHandler(investigationsGroup, {
  list: later,
  kpis: later,
  pendingTasks: later,
  get: later,
});
