import * as z from '../zod.js';
import { ADMIN_UP } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { FLEET_VIEW_MEMORY_MB } from '../function-memory.js';

// Kept here, not imported from shared/fleet/exposition.ts: declarations import no domain code.
const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** The fleet for a Prometheus scraper (issue 20 §6): the SCRAPE_TOKEN, or an admin's JWT (the LLM ledger's totals only for the scraper and superadmins). */
export const metricsGroup = defineGroup({
  name: 'metrics',
  config: ['scrape', 'llm-pricing', 'patrol', 'agent-budget'],
  tables: {
    users: 'read',
    clusters: 'read',
    metrics: 'read',
    alerts: 'read',
    rules: 'read',
    scores: 'read',
    issues: 'read',
    patrol: 'read',
    investigations: 'read',
    'llm-usage': 'read',
  },
  // It computes the fleet view in its own container (shared/function-memory.ts says what that measured).
  memoryMb: FLEET_VIEW_MEMORY_MB,
  routes: {
    exposition: {
      method: 'GET',
      path: '/api/metrics',
      summary: 'Fleet health in the Prometheus text exposition format (version 0.0.4)',
      auth: 'scrape',
      roles: ADMIN_UP,
      contentType: EXPOSITION_CONTENT_TYPE,
      response: z.string(),
      // 10,000 clusters: ≈ 12 MB of text (20 MB before the info series; the scrape bench), over what Lambda may answer unless gzipped, as Prometheus asks (shared/http/group-handler.ts).
      problems: [406],
    },
  },
});
