// health route group: the metrics-only view of the fleet.
import { ServiceUnavailable } from '../shared/http/errors.js';
import { createGroupHandler } from '../shared/http/group-handler.js';
import { createLogger, errorFields } from '../shared/log.js';
import { healthGroup } from '../shared/routes/health.js';
import { enrichment, healthKpis } from '../shared/scoring/health-score.js';
import { refreshFleetView, viewAnswer } from '../shared/scoring/fleet-view.js';

const SOURCE = 'live';
const log = createLogger('health');

export const handler = createGroupHandler(healthGroup, {
  scores: viewAnswer('health.scores', SOURCE, (view) => ({ scores: view.healthScores })),
  kpis: viewAnswer('health.kpis', SOURCE, (view) => ({ kpis: healthKpis(view.healthScores, view.fleet, view.health.rules, view.now) })),
  enrichment: viewAnswer('health.enrichment', SOURCE, (view) => ({ clusters: enrichment(view.fleet) })),
  refresh: async () => {
    try {
      const view = await refreshFleetView(['health']);
      return { scores: view.healthScores, source: SOURCE, generated_at: view.generatedAt, refreshed: true };
    } catch (error) {
      // The spec's answer for a failed refresh; the cause goes to the log, not the client.
      log.error('health refresh failed', errorFields(error));
      throw new ServiceUnavailable('Health scores could not be refreshed; the previous scores are still served. Try again shortly.');
    }
  },
});
