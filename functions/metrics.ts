// metrics route group: the fleet in the Prometheus text format, for a scraper (SCRAPE_TOKEN) or an admin.
import { fleetExposition } from '../shared/fleet/exposition.js';
import { createGroupHandler } from '../shared/http/group-handler.js';
import { metricsGroup } from '../shared/routes/metrics.js';

export const handler = createGroupHandler(metricsGroup, {
  // The whole LLM ledger's figures are a superadmin's (spec §4), or the scraper's: not an admin's.
  exposition: async (req) => fleetExposition(new Date(), { llmUsage: !req.principal || req.principal.role === 'superadmin' }),
});
