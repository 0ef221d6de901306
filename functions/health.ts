// health route group: the metrics-only view of the fleet.
import { createGroupHandler } from '../shared/http/group-handler.js';
import { healthGroup } from '../shared/routes/health.js';
import { readSnapshot } from '../shared/db/scores.js';
import { enrichment, healthKpis, type HealthScore } from '../shared/scoring/health-score.js';
import { viewAnswer } from '../shared/scoring/fleet-view.js';
import { refreshRoutes } from '../shared/scoring/refresh.js';

const SOURCE = 'live';
// The refresh is the recompute worker's (shared/scoring/refresh.ts); the scores it answers are the
// health snapshot that run persisted, worst first as computed.
const refresh = refreshRoutes(
  ['health'],
  healthGroup.routes.refreshStatus,
  async (f) => ({
    // Persisted worst first (healthScores sorts it), and read back in that order.
    scores: await readSnapshot<HealthScore>('health', f.generated_at),
    source: SOURCE as typeof SOURCE,
    generated_at: f.generated_at,
    refreshed: true as const,
  }),
  // The spec's answer for a failed refresh; the cause goes to the recompute worker's log, not the client.
  'Health scores could not be refreshed; the previous scores are still served. Try again shortly.',
);

export const handler = createGroupHandler(healthGroup, {
  scores: viewAnswer(
    'health.scores',
    SOURCE,
    (view) => ({ scores: view.healthScores }),
    (view, id) => ({ scores: view.healthScores.filter((s) => s.cluster_id === id) }),
  ),
  kpis: viewAnswer('health.kpis', SOURCE, (view) => ({ kpis: healthKpis(view.healthScores, view.fleet, view.health.rules, view.now, view.aggregates) })),
  enrichment: viewAnswer('health.enrichment', SOURCE, (view) => ({ clusters: enrichment(view.fleet) })),
  refresh: refresh.start,
  refreshStatus: refresh.follow,
});
