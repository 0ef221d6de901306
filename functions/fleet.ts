// fleet route group: unified scores, KPIs, at-risk clusters, rules, refresh.
import { createGroupHandler } from '../shared/http/group-handler.js';
import { fleetGroup } from '../shared/routes/fleet.js';
import { loadHealthRules } from '../shared/rules/load.js';
import { fleetKpis } from '../shared/scoring/fleet-score.js';
import { viewAnswer } from '../shared/scoring/fleet-view.js';
import { refreshRoutes } from '../shared/scoring/refresh.js';

// The refresh is the recompute worker's (shared/scoring/refresh.ts): every view, as before.
const refresh = refreshRoutes(
  ['fleet', 'health', 'risk'],
  fleetGroup.routes.refreshStatus,
  (f) => ({ status: 'ok' as const, clusters_scored: f.total_clusters, critical: f.critical, warning: f.warning }),
  'The fleet could not be refreshed; the previous scores are still served. Try again shortly.',
);

export const handler = createGroupHandler(fleetGroup, {
  scores: viewAnswer(
    'fleet.scores',
    'unified',
    (view) => ({ scores: view.scores }),
    (view, id) => ({ scores: view.scores.filter((s) => s.cluster_id === id) }),
  ),
  kpis: viewAnswer('fleet.kpis', 'unified', (view) => ({ kpis: fleetKpis(view.scores) })),
  critical: viewAnswer('fleet.critical', 'unified', (view) => {
    const clusters = view.scores.filter((s) => s.classification !== 'Healthy');
    return { clusters, total: clusters.length };
  }),
  rules: async () => (await loadHealthRules()).rules,
  refresh: refresh.start,
  refreshStatus: refresh.follow,
});
