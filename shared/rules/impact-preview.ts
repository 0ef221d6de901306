// What a pending health or risk rules proposal would change, for its detail
// (editing.ts): the fleet scored with the live rules and with the proposal, on the
// current data. In its own module so the settings group loads the scoring engine
// only with the first detail that shows an impact (a chunk of its bundle).
import { CRITICAL_ALERT_DAYS } from '../scoring/critical.js';
import { fleetView, loadFleetInputs, rollupDaysFor } from '../scoring/fleet-view.js';
import { healthImpact, riskImpact, type RuleImpact } from '../scoring/impact.js';
import type { HealthRules, RiskRules } from './schemas.js';

/**
 * The clusters `proposed` would move: the cached view's inputs when they cover its
 * lookbacks, else read afresh for the longer of its and the live rules' windows. Nothing is written.
 */
export async function proposalImpact(proposed: HealthRules | RiskRules): Promise<RuleImpact> {
  const view = await fleetView();
  const health = 'scoring' in proposed ? proposed.scoring : view.health.rules;
  const risk = 'risk' in proposed ? proposed.risk : view.risk.rules;
  const covered =
    rollupDaysFor(health, risk) <= rollupDaysFor(view.health.rules, view.risk.rules) &&
    health.lookback_days <= Math.max(CRITICAL_ALERT_DAYS, view.health.rules.lookback_days);
  // A refresh's view holds its lookback folded (windowed): another lookback is read day by day, as far back as
  // the live rules or the proposal reach, since "before" scores the live rules on the same inputs.
  const fleet =
    covered && !view.windowed
      ? view.fleet
      : await loadFleetInputs(
          Math.max(rollupDaysFor(health, risk), rollupDaysFor(view.health.rules, view.risk.rules)),
          Math.max(health.lookback_days, view.health.rules.lookback_days),
          view.now,
        );
  return 'scoring' in proposed ? healthImpact(fleet, view.health.rules, health, view.now) : riskImpact(fleet, view.risk.rules, risk, view.now);
}
