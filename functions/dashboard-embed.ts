// dashboard-embed route group.
import { createGroupHandler, notImplemented } from '../shared/http/group-handler.js';
import { dashboardEmbedGroup } from '../shared/routes/dashboard-embed.js';

const later = notImplemented('issue #11, dashboard embed');

export const handler = createGroupHandler(dashboardEmbedGroup, {
  acquireSession: later,
  generateTokens: later,
});
