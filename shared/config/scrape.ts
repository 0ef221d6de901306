// Scrape: GET /api/metrics for a Prometheus server. Its bearer token is the
// SCRAPE_TOKEN secret (shared/config/secrets.ts; checked by the middleware):
// its own secret, not the ingest token, since a scraper reads the fleet and a
// sender writes it. Its value locally is checked here for length, as the ingest token's.
import { defineSettings, whole } from './env.js';
import { staticTokenVariable } from './secrets.js';

export const scrapeSettings = defineSettings(
  'scrape',
  () => ({
    /** The window of the issue, investigation and LLM figures GET /api/metrics answers (patrol's is fixed at 30 days). */
    SCRAPE_WINDOW_DAYS: whole('SCRAPE_WINDOW_DAYS', 30, 1, 365, ' of days'),
    SCRAPE_TOKEN: staticTokenVariable('SCRAPE_TOKEN'),
  }),
  // The token itself stays out of the settings: the middleware reads it through secret() as on AWS.
  { secrets: ['SCRAPE_TOKEN'], derive: (v) => ({ SCRAPE_WINDOW_DAYS: v.SCRAPE_WINDOW_DAYS }) },
);
