// metrics route group: the fleet in the Prometheus text format, for a scraper (SCRAPE_TOKEN) or an admin.
import { fleetExposition } from '../shared/fleet/exposition.js';
import { acceptsGzip, createGroupHandler } from '../shared/http/group-handler.js';
import { LAMBDA_ANSWER_BYTES } from '../shared/http/lambda-payload.js';
import type { Role } from '../shared/auth/roles.js';
import { llmUsageGroup } from '../shared/routes/llm-usage.js';
import { metricsGroup } from '../shared/routes/metrics.js';

/** Who may read the LLM ledger's figures: those its own routes let in (spec §4: a superadmin), and the scraper. */
const LEDGER_READERS: readonly Role[] = llmUsageGroup.routes.summary.roles;

export const handler = createGroupHandler(metricsGroup, {
  exposition: async (req) =>
    fleetExposition(new Date(), {
      llmUsage: !req.principal || LEDGER_READERS.includes(req.principal.role),
      // Prometheus asks gzipped: carry no more clusters than fit in what a Lambda function may answer.
      gzippedBytesMax: acceptsGzip(req.rawHeaders['accept-encoding']) ? LAMBDA_ANSWER_BYTES : undefined,
    }),
});
