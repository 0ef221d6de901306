// analysis route group: breaking points, usage charts, upgrades.
import { createGroupHandler } from '../shared/http/group-handler.js';
import { analysisGroup } from '../shared/routes/analysis.js';
import { breakingPoints, upgrades, usage } from '../shared/scoring/analysis.js';
import { viewAnswer } from '../shared/scoring/fleet-view.js';

export const handler = createGroupHandler(analysisGroup, {
  breaking: viewAnswer('analysis.breaking', 'live', (view) => breakingPoints(view.snapshots, view.risk.rules)),
  usage: viewAnswer('analysis.usage', 'live', (view) => usage(view.fleet, view.scores, view.health.rules, view.risk.rules, view.now)),
  upgrades: viewAnswer('analysis.upgrades', 'live', (view) => upgrades(view.fleet)),
});
