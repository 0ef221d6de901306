// recompute: scheduled (every 15 minutes) refresh of scores and risk, so
// dashboards are never older than that without anyone clicking refresh.
// The same run regroups recent alerts into issues (open issues whose quiet
// period has passed become Resolved; edited issue rules reach recent history).
import { regroupRecent, type RegroupResult } from '../shared/issues/regroup.js';
import { createLogger } from '../shared/log.js';
import { fleetKpis } from '../shared/scoring/fleet-score.js';
import { refreshFleetView } from '../shared/scoring/fleet-view.js';

const log = createLogger('recompute');

export const handler = async (): Promise<{ generated_at: string; clusters: number; critical: number; warning: number; issues: RegroupResult | null }> => {
  const started = Date.now();
  // Grouping failures are logged per cluster inside regroupRecent; anything else must not cost the score refresh.
  const [view, issues] = await Promise.all([
    refreshFleetView(['fleet', 'health', 'risk']),
    regroupRecent().catch((error: unknown) => {
      log.error('issue grouping pass failed', { error: String(error) });
      return null;
    }),
  ]);
  const kpis = fleetKpis(view.scores);
  const result = { generated_at: view.generatedAt, clusters: kpis.total_clusters, critical: kpis.critical_count, warning: kpis.warning_count, issues };
  log.info('recomputed', { ...result, duration_ms: Date.now() - started });
  return result;
};
