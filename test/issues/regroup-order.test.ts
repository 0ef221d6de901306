// Regrouping after every delivery, in any order, ends where grouping all the alerts at once does:
// seeded random sequences (alerts delivered late, firing then resolved, triage in between) against
// DynamoDB Local. A split of a stored issue failed every later pass of its cluster (regroup.ts's
// reservation); this is the property that found it.
import { beforeAll, expect, it } from 'vitest';
import { listClusterAlertFields, upsertAlert } from '../../shared/db/alerts.js';
import { getIssue, listClusterIssues, transactIssues, triageAction } from '../../shared/db/issues.js';
import { GROUPED_FIELDS, groupAlerts } from '../../shared/issues/grouping.js';
import { regroupClusters } from '../../shared/issues/regroup.js';
import { loadIssueRules } from '../../shared/rules/load.js';
import { alertRecord, storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';

const NOW = new Date();

beforeAll(async () => {
  await useTestTables();
});

/** A deterministic generator (the same sequences every run): a failure names its seed and round. */
function random(seed: number) {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

const alertOf = (clusterId: string, name: string, startedAgo: number, endedAgo: number | null, fingerprint: string) =>
  alertRecord(NOW, clusterId, name, startedAgo, endedAgo, fingerprint);

/** What comparing issues looks at: their key, span, count, status and severity (ids depend on history by design). */
const shapeOf = (g: {
  group_key: string;
  first_seen: string;
  last_seen: string;
  alert_count: number;
  status: string;
  resolved_at: string | null;
  severity: string;
}) => `${g.group_key}|${g.first_seen}|${g.last_seen}|${g.alert_count}|${g.status}|${g.resolved_at}|${g.severity}`;

it('regrouping after each delivery, in random order with triage between, ends in the issues of all alerts grouped at once; a second pass writes nothing', async () => {
  const problems: string[] = [];
  for (const seed of [1, 2, 3]) {
    const next = random(seed);
    for (let round = 0; round < 8; round++) {
      const c = await storedCluster();
      const alerts = Array.from({ length: 4 + Math.floor(next() * 6) }, (_, i) => {
        const start = Math.floor(next() * 1500) + 10;
        const end = next() < 0.25 ? null : Math.max(0, start - Math.floor(next() * 200));
        return alertOf(c, next() < 0.7 ? 'Lag' : 'Disk', start, end, `fp${i}`);
      });
      // Some resolved alerts are delivered firing first; deliveries come in any order, a firing one after its resolution dropped (stale).
      const deliveries = alerts.flatMap((a) => (a.status === 'Resolved' && next() < 0.4 ? [{ ...a, status: 'Firing' as const, ends_at: null }, a] : [a]));
      deliveries.sort(() => next() - 0.5);
      const resolved = new Set<string>();
      let stamp = NOW.getTime() - 5000;
      for (const delivery of deliveries) {
        if (delivery.status === 'Firing' && resolved.has(delivery.fingerprint)) continue;
        if (delivery.status === 'Resolved') resolved.add(delivery.fingerprint);
        await upsertAlert(delivery, new Date(stamp++));
        const pass = await regroupClusters([c], NOW);
        if (pass.failed) problems.push(`seed ${seed} round ${round}: a pass failed after ${delivery.fingerprint} ${delivery.status}`);
        if (next() < 0.3) {
          const live = (await listClusterIssues(c)).filter((i) => !i.superseded_by);
          const pick = live[Math.floor(next() * live.length)];
          if (pick) await transactIssues([triageAction(pick.issue_id, { notes: `n${stamp}` }, (await getIssue(pick.issue_id))!.triage_version, 'tester')]);
        }
      }
      const { rules } = await loadIssueRules();
      const expected = groupAlerts(await listClusterAlertFields(c, new Date(0), GROUPED_FIELDS), rules, NOW)
        .map(shapeOf)
        .sort();
      const got = (await listClusterIssues(c))
        .filter((i) => !i.superseded_by)
        .map(shapeOf)
        .sort();
      if (JSON.stringify(got) !== JSON.stringify(expected)) problems.push(`seed ${seed} round ${round}: ${JSON.stringify({ expected, got })}`);
      const again = await regroupClusters([c], NOW);
      if (again.created + again.updated + again.removed + again.failed) problems.push(`seed ${seed} round ${round}: a second pass ${JSON.stringify(again)}`);
    }
  }
  expect(problems).toEqual([]);
}, 180_000);
