// health route group: the metrics-only view of the fleet.
import { ServiceUnavailable } from '../shared/http/errors.js';
import { createGroupHandler } from '../shared/http/group-handler.js';
import { createLogger, errorFields } from '../shared/log.js';
import { healthGroup } from '../shared/routes/health.js';
import { enrichment, healthKpis } from '../shared/scoring/health-score.js';
import { fleetView, preparedAnswer, refreshFleetView } from '../shared/scoring/fleet-view.js';

const SOURCE = 'live';
const log = createLogger('health');

export const handler = createGroupHandler(healthGroup, {
  scores: async () => {
    const view = await fleetView();
    return preparedAnswer(view, 'health.scores', () => ({ scores: view.healthScores, source: SOURCE, generated_at: view.generatedAt }));
  },
  kpis: async () => {
    const view = await fleetView();
    return preparedAnswer(view, 'health.kpis', () => ({
      kpis: healthKpis(view.healthScores, view.fleet, view.health.rules, view.now),
      source: SOURCE,
      generated_at: view.generatedAt,
    }));
  },
  enrichment: async () => {
    const view = await fleetView();
    return preparedAnswer(view, 'health.enrichment', () => ({ clusters: enrichment(view.fleet), source: SOURCE, generated_at: view.generatedAt }));
  },
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
