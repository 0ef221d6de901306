// fleet route group: unified scores, KPIs, at-risk clusters, rules, refresh.
import { createGroupHandler } from '../shared/http/group-handler.js';
import { fleetGroup } from '../shared/routes/fleet.js';
import { loadHealthRules } from '../shared/rules/load.js';
import { fleetKpis } from '../shared/scoring/fleet-score.js';
import { refreshFleetView, viewAnswer } from '../shared/scoring/fleet-view.js';

export const handler = createGroupHandler(fleetGroup, {
  scores: viewAnswer('fleet.scores', 'unified', (view) => ({ scores: view.scores })),
  kpis: viewAnswer('fleet.kpis', 'unified', (view) => ({ kpis: fleetKpis(view.scores) })),
  critical: viewAnswer('fleet.critical', 'unified', (view) => {
    const clusters = view.scores.filter((s) => s.classification !== 'Healthy');
    return { clusters, total: clusters.length };
  }),
  rules: async () => (await loadHealthRules()).rules,
  refresh: async () => {
    const view = await refreshFleetView(['fleet', 'health', 'risk']);
    const kpis = fleetKpis(view.scores);
    return { status: 'ok', clusters_scored: kpis.total_clusters, critical: kpis.critical_count, warning: kpis.warning_count };
  },
});
