// Impact preview of a rule change (issue 6): every cluster scored with the live
// rules and with the proposed ones on the same inputs; the clusters whose
// classification (health rules) or risk level (risk rules) would change.
// Pure: nothing is written.
import type * as z from '../zod.js';
import type { RiskRuleSet, ScoringRules } from '../rules/schemas.js';
import { scoreFleet, type Classification } from './fleet-score.js';
import { byName, type ClusterData } from './inputs.js';
import { riskSnapshot } from './risk.js';
import type * as contract from './schemas.js';

type Level = Classification; // risk levels use the same three names

// The answer's shape is the zod schema in schemas.ts; these are inferred from it.
export type ImpactChange = z.infer<typeof contract.ImpactChange>;
export type RuleImpact = z.infer<typeof contract.RuleImpact>;

const SEVERITY: Record<Level, number> = { Healthy: 0, Warning: 1, Critical: 2 };

interface Outcome {
  cluster: ClusterData['cluster'];
  before: Level;
  after: Level;
  detail: string;
}

function summarize(measure: RuleImpact['measure'], outcomes: Outcome[], now: Date): RuleImpact {
  const before: Record<Level, number> = { Healthy: 0, Warning: 0, Critical: 0 };
  const after: Record<Level, number> = { Healthy: 0, Warning: 0, Critical: 0 };
  const changes: ImpactChange[] = [];
  for (const o of outcomes) {
    before[o.before]++;
    after[o.after]++;
    if (o.before === o.after) continue;
    changes.push({
      cluster_id: o.cluster.cluster_id,
      cluster_name: o.cluster.cluster_name,
      customer_name: o.cluster.customer_name,
      from: o.before,
      to: o.after,
      direction: SEVERITY[o.after] > SEVERITY[o.before] ? 'worse' : 'better',
      detail: o.detail,
    });
  }
  changes.sort((a, b) => (a.direction === b.direction ? 0 : a.direction === 'worse' ? -1 : 1) || byName(a.cluster_name, b.cluster_name));
  return { measure, computed_at: now.toISOString(), clusters_total: outcomes.length, changed_count: changes.length, before, after, changes };
}

/**
 * Why a cluster's class moves: its tier-adjusted score, and each classification threshold between the
 * two classes that the proposal moves. A change of thresholds alone leaves the score as it was, and
 * "tier-adjusted score 88.8 → 88.8" beside Healthy → Warning explained nothing: the threshold did it.
 */
function classDetail(was: number, will: number, from: Level, to: Level, live: ScoringRules, proposed: ScoringRules): string {
  const score = was === will ? `tier-adjusted score ${was}, unchanged` : `tier-adjusted score ${was} → ${will}`;
  // Healthy|Warning is split by `healthy`, Warning|Critical by `warning`: the bounds crossed between the two classes.
  const crossed = (['healthy', 'warning'] as const).filter((_, i) => Math.min(SEVERITY[from], SEVERITY[to]) <= i && i < Math.max(SEVERITY[from], SEVERITY[to]));
  const moved = crossed
    .filter((b) => live.classification[b] !== proposed.classification[b])
    .map((b) => `the ${b === 'healthy' ? 'Healthy' : 'Warning'} threshold ${live.classification[b]} → ${proposed.classification[b]}`);
  return [score, ...moved].join('; ');
}

export function healthImpact(fleet: readonly ClusterData[], live: ScoringRules, proposed: ScoringRules, now: Date): RuleImpact {
  const before = new Map(scoreFleet(fleet, live, now).map((s) => [s.cluster_id, s]));
  const after = new Map(scoreFleet(fleet, proposed, now).map((s) => [s.cluster_id, s]));
  const outcomes = fleet.map((d) => {
    const was = before.get(d.cluster.cluster_id)!;
    const will = after.get(d.cluster.cluster_id)!;
    return {
      cluster: d.cluster,
      before: was.classification,
      after: will.classification,
      detail: classDetail(was.tier_adjusted_score, will.tier_adjusted_score, was.classification, will.classification, live, proposed),
    };
  });
  return summarize('classification', outcomes, now);
}

export function riskImpact(fleet: readonly ClusterData[], live: RiskRuleSet, proposed: RiskRuleSet, now: Date): RuleImpact {
  const outcomes = fleet.map((d) => {
    const was = riskSnapshot(d, live, 0, now);
    const will = riskSnapshot(d, proposed, 0, now);
    return { cluster: d.cluster, before: was.risk_level, after: will.risk_level, detail: will.risk_signals[0] ?? 'no risk signals' };
  });
  return summarize('risk_level', outcomes, now);
}
