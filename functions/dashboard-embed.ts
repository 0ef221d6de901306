// dashboard-embed route group: cookieless embed sessions (shared/embed/sessions.ts).
import { createGroupHandler } from '../shared/http/group-handler.js';
import { acquireEmbedSession, configuredDashboard, generateEmbedTokens } from '../shared/embed/sessions.js';
import { dashboardEmbedGroup } from '../shared/routes/dashboard-embed.js';

export const handler = createGroupHandler(dashboardEmbedGroup, {
  acquireSession: async (req) => acquireEmbedSession({ principal: req.principal, origin: req.headers.origin, userAgent: req.userAgent }),
  dashboard: async () => configuredDashboard(),
  generateTokens: async (req) =>
    generateEmbedTokens({ principal: req.principal, userAgent: req.userAgent, apiToken: req.body.api_token, navigationToken: req.body.navigation_token }),
});
