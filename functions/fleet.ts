// fleet route group: unified scores, KPIs, at-risk clusters, rules, refresh.
import { createGroupHandler } from '../shared/http/group-handler.js';
import { fleetGroup } from '../shared/routes/fleet.js';
import { loadHealthRules } from '../shared/rules/load.js';
import { fleetKpis } from '../shared/scoring/fleet-score.js';
import { fleetView, preparedAnswer, refreshFleetView } from '../shared/scoring/fleet-view.js';

const SOURCE = 'unified';

export const handler = createGroupHandler(fleetGroup, {
  scores: async () => {
    const view = await fleetView();
    return preparedAnswer(view, 'fleet.scores', () => ({ scores: view.scores, source: SOURCE, generated_at: view.generatedAt }));
  },
  kpis: async () => {
    const view = await fleetView();
    return preparedAnswer(view, 'fleet.kpis', () => ({ kpis: fleetKpis(view.scores), source: SOURCE, generated_at: view.generatedAt }));
  },
  critical: async () => {
    const view = await fleetView();
    return preparedAnswer(view, 'fleet.critical', () => {
      const clusters = view.scores.filter((s) => s.classification !== 'Healthy');
      return { clusters, total: clusters.length, source: SOURCE, generated_at: view.generatedAt };
    });
  },
  rules: async () => (await loadHealthRules()).rules,
  refresh: async () => {
    const view = await refreshFleetView(['fleet', 'health', 'risk']);
    const kpis = fleetKpis(view.scores);
    return { status: 'ok', clusters_scored: kpis.total_clusters, critical: kpis.critical_count, warning: kpis.warning_count };
  },
});
