// recompute: scheduled (every 15 minutes) refresh of scores and risk, so
// dashboards are never older than that without anyone clicking refresh.
// Issue grouping joins this run with the alert-issues capability.
import { createLogger } from '../shared/log.js';
import { fleetKpis } from '../shared/scoring/fleet-score.js';
import { refreshFleetView } from '../shared/scoring/fleet-view.js';

const log = createLogger('recompute');

export const handler = async (): Promise<{ generated_at: string; clusters: number; critical: number; warning: number }> => {
  const started = Date.now();
  const view = await refreshFleetView(['fleet', 'health', 'risk']);
  const kpis = fleetKpis(view.scores);
  const result = { generated_at: view.generatedAt, clusters: kpis.total_clusters, critical: kpis.critical_count, warning: kpis.warning_count };
  log.info('recomputed', { ...result, duration_ms: Date.now() - started });
  return result;
};
