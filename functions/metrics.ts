// metrics route group: the fleet in the Prometheus text format, for a scraper (SCRAPE_TOKEN) or an admin.
import { fleetExposition } from '../shared/fleet/exposition.js';
import { createGroupHandler } from '../shared/http/group-handler.js';
import { metricsGroup } from '../shared/routes/metrics.js';

export const handler = createGroupHandler(metricsGroup, {
  exposition: async () => fleetExposition(),
});
