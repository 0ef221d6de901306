// analysis route group: breaking points, usage charts, upgrades.
import { createGroupHandler } from '../shared/http/group-handler.js';
import { analysisGroup } from '../shared/routes/analysis.js';
import { breakingPoints, upgrades, usage } from '../shared/scoring/analysis.js';
import { fleetView, preparedAnswer } from '../shared/scoring/fleet-view.js';

const SOURCE = 'live';

export const handler = createGroupHandler(analysisGroup, {
  breaking: async () => {
    const view = await fleetView();
    return preparedAnswer(view, 'analysis.breaking', () => ({
      ...breakingPoints(view.snapshots, view.risk.rules),
      source: SOURCE,
      generated_at: view.generatedAt,
    }));
  },
  usage: async () => {
    const view = await fleetView();
    return preparedAnswer(view, 'analysis.usage', () => ({
      ...usage(view.fleet, view.scores, view.health.rules, view.risk.rules, view.now),
      source: SOURCE,
      generated_at: view.generatedAt,
    }));
  },
  upgrades: async () => {
    const view = await fleetView();
    return preparedAnswer(view, 'analysis.upgrades', () => ({ ...upgrades(view.fleet), source: SOURCE, generated_at: view.generatedAt }));
  },
});
