// A proposal's impact preview against DynamoDB Local, on the view a refresh cached (its
// lookback folded, so the preview reads the inputs again): "before" is the live view's.
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { ingestAlerts, ingestMetrics } from '../../shared/fleet/ingest.js';
import { getCurrentRuleSet, writeRuleSetVersion } from '../../shared/db/rules.js';
import { checkRuleText } from '../../shared/rules/check.js';
import { defaultRuleText, type RuleSetName } from '../../shared/rules/defaults.js';
import { proposalImpact } from '../../shared/rules/impact-preview.js';
import type { HealthRules } from '../../shared/rules/schemas.js';
import { refreshFleetView } from '../../shared/scoring/fleet-view.js';
import { alertNotice, storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';

function checked(name: RuleSetName, text: string) {
  const result = checkRuleText(name, text);
  if (!result.ok) throw new Error(result.message);
  return result.value;
}

async function writeLive(name: RuleSetName, value: unknown): Promise<void> {
  const text = stringify(value);
  await writeRuleSetVersion(name, text, checked(name, text), (await getCurrentRuleSet(name))?.version ?? 0, 'vitest');
}

beforeAll(async () => {
  await useTestTables();
});

describe('impact preview on a refreshed view', () => {
  it('scores "before" with the live lookback when the proposal shortens it past the 14 days of alerts always read', async () => {
    const now = new Date();
    const health = parse(defaultRuleText('health-rules'));
    health.scoring.lookback_days = 21;
    const risk = parse(defaultRuleText('risk-rules'));
    risk.risk.lookback_days = 21;
    await writeLive('health-rules', health);
    await writeLive('risk-rules', risk);
    const id = await storedCluster({ customer_tier: 'S' });
    await ingestMetrics(
      [0, 1, 2, 3].map((d) => ({
        cluster_id: id,
        metric_key: 'disk_used_pct',
        value: 30,
        at: new Date(now.getTime() - d * 86_400_000 - 60_000).toISOString(),
      })),
      now,
    );
    // Resolved alerts 16 to 18 days old: inside the live 21 days, outside the proposal's 7 and the 14 always read.
    const minutes = (days: number) => days * 24 * 60;
    await ingestAlerts(
      [16, 17, 18].map((d) => alertNotice(now, id, `Old${d}`, `fp${d}`, minutes(d), minutes(d) - 30)),
      now,
    );
    const live = await refreshFleetView(['fleet', 'health', 'risk']);
    const liveClass = live.scores.find((s) => s.cluster_id === id)!.classification;
    expect(liveClass).not.toBe('Healthy'); // the old alerts count under the live rules

    const proposed = parse(defaultRuleText('health-rules'));
    proposed.scoring.lookback_days = 7;
    const impact = await proposalImpact(checked('health-rules', stringify(proposed)) as HealthRules);
    expect(impact.before[liveClass as 'Warning' | 'Critical']).toBe(1);
    expect(impact.changes.filter((c) => c.cluster_id === id)).toEqual([expect.objectContaining({ from: liveClass, to: 'Healthy', direction: 'better' })]);
  });
});
