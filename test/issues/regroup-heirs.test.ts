// Which issue each issue of edited grouping keys goes on as (heirsAcrossKeys), without DynamoDB: the issue holding most
// of its alerts, at the size of a cluster whose alert flapped for weeks (thousands of issues on either side, each
// alert's old and new issue found by binary search: it was a scan of every alert per old issue).
import { describe, expect, it } from 'vitest';
import type { IssueRecord } from '../../shared/db/issues.js';
import { type GroupedAlert, groupAlerts } from '../../shared/issues/grouping.js';
import { heirsAcrossKeys } from '../../shared/issues/regroup.js';
import { checkRuleText } from '../../shared/rules/check.js';
import { defaultRuleText } from '../../shared/rules/defaults.js';
import type { IssueRules } from '../../shared/rules/schemas.js';

const NOW = new Date('2026-12-01T00:00:00Z');
const CLUSTER = 'c-heirs';

function rulesWith(keys: string): IssueRules {
  const checked = checkRuleText('issue-rules', defaultRuleText('issue-rules').replace('keys: [cluster, alert_name]', `keys: ${keys}`));
  if (!checked.ok) throw new Error(checked.message);
  return checked.value as IssueRules;
}

/** An alert that fired for a minute, `hoursAgo` hours before NOW. */
function alert(name: string, hoursAgo: number, n: number): GroupedAlert {
  const start = NOW.getTime() - hoursAgo * 3_600_000;
  return {
    cluster_id: CLUSTER,
    alert_name: name,
    labels: { alertname: name, cluster_id: CLUSTER },
    starts_at: new Date(start).toISOString(),
    ends_at: new Date(start + 60_000).toISOString(),
    status: 'Resolved',
    fingerprint: `${name}-${n}`,
  };
}

/** What grouping stored under `rules`, as the records a pass reads (the fields heirsAcrossKeys reads are the grouping's). */
const storedUnder = (alerts: GroupedAlert[], rules: IssueRules) => groupAlerts(alerts, rules, NOW) as unknown as IssueRecord[];

describe('the issues edited grouping keys go on as', () => {
  it('each old issue goes on as the new one holding its alerts, across thousands of issues on either side', () => {
    // Two alerts taking turns every 5 hours (past the 4-hour join window): 2 × 2,500 issues keyed by name, 5,000 by cluster.
    const alerts = Array.from({ length: 5_000 }, (_, n) => alert(n % 2 ? 'B' : 'A', 5 * (5_000 - n), n));
    const byName = rulesWith('[cluster, alert_name]');
    const byCluster = rulesWith('[cluster]');
    const old = storedUnder(alerts, byName);
    const produced = groupAlerts(alerts, byCluster, NOW);
    expect([old.length, produced.length]).toEqual([5_000, 5_000]);
    const heirs = heirsAcrossKeys(old, produced, alerts, byCluster);
    expect(heirs.size).toBe(5_000);
    for (const issue of old) expect(heirs.get(issue.issue_id)!.first_seen, issue.issue_id).toBe(issue.first_seen);
    // And back: each issue keyed by cluster goes on as its alert's issue keyed by name.
    const back = heirsAcrossKeys(storedUnder(alerts, byCluster), old as never, alerts, byName);
    expect([...back.values()].map((g) => g.first_seen).sort()).toEqual(old.map((i) => i.first_seen).sort());
  });

  it('an issue folding several goes to the one holding most of its alerts; issues of the rules keys have no heir', () => {
    // Keyed by cluster, one issue of A, A, B (within the join window); keyed by name, A's issue holds two of its three.
    const alerts = [alert('A', 3, 1), alert('B', 2.5, 2), alert('A', 2, 3)];
    const byName = rulesWith('[cluster, alert_name]');
    const [merged] = storedUnder(alerts, rulesWith('[cluster]'));
    const produced = groupAlerts(alerts, byName, NOW);
    const heirs = heirsAcrossKeys([merged!, ...storedUnder(alerts, byName)], produced, alerts, byName);
    expect([...heirs.keys()]).toEqual([merged!.issue_id]);
    expect(heirs.get(merged!.issue_id)).toMatchObject({ issue_name: 'A', alert_count: 2 });
  });
});
