// dashboard-embed route group: cookieless embed sessions (shared/embed/sessions.ts).
import { createGroupHandler } from '../shared/http/group-handler.js';
import { acquireEmbedSession, configuredDashboard, generateEmbedTokens } from '../shared/embed/sessions.js';
import { dashboardEmbedGroup } from '../shared/routes/dashboard-embed.js';

/** A header by name, whatever its case (API Gateway HTTP APIs lower-case them; a direct invoke may not). */
function header(headers: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === wanted) return value;
  return undefined;
}

export const handler = createGroupHandler(dashboardEmbedGroup, {
  acquireSession: async (req) => acquireEmbedSession({ principal: req.principal, origin: header(req.headers, 'origin'), userAgent: req.userAgent }),
  dashboard: async () => configuredDashboard(),
  generateTokens: async (req) =>
    generateEmbedTokens({ principal: req.principal, userAgent: req.userAgent, apiToken: req.body.api_token, navigationToken: req.body.navigation_token }),
});
