// Regrouping against DynamoDB Local, by hand-made alert sequences: ids and
// triage survive late and bridging alerts, edited keys, late resolutions,
// concurrent runs; a second run writes nothing.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { upsertAlert } from '../../shared/db/alerts.js';
import { upsertClusters } from '../../shared/db/clusters.js';
import { getIssue, listClusterIssues, NO_SUCCESSOR, transactIssues, triageAction } from '../../shared/db/issues.js';
import { writeRuleSetVersion, getCurrentRuleSet } from '../../shared/db/rules.js';
import { regroupClusters } from '../../shared/issues/regroup.js';
import { checkRuleText } from '../../shared/rules/check.js';
import { defaultRuleText } from '../../shared/rules/defaults.js';
import { alertRecord } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';

const NOW = new Date();
const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000).toISOString();

beforeAll(async () => {
  await useTestTables();
});

/** A cluster of its own per test, so tests do not see each other's issues. */
async function newCluster(): Promise<string> {
  const id = randomUUID();
  await upsertClusters([
    {
      cluster_id: id,
      cluster_name: `c-${id.slice(0, 6)}`,
      customer_name: 'Acme',
      account_id: '1',
      account_name: 'Acme',
      email: 'ops@acme.example',
      customer_tier: 'A',
      cluster_type: 'ELASTIC',
      region: 'EU (eu-west-1)',
      engine_version: '3.3.1',
      resource_state: 'RUNNING',
      node_count: 3,
    },
  ]);
  return id;
}

async function alert(
  clusterId: string,
  name: string,
  startedAgo: number,
  endedAgo: number | null,
  fingerprint = `${name}-${startedAgo}`,
  notifiedAt = NOW,
): Promise<void> {
  const record = alertRecord(NOW, clusterId, name, startedAgo, endedAgo, fingerprint);
  await upsertAlert(record, notifiedAt);
}

const issuesOf = async (clusterId: string) => (await listClusterIssues(clusterId)).sort((a, b) => (a.first_seen < b.first_seen ? -1 : 1));
async function triage(issueId: string, notes: string) {
  const issue = (await getIssue(issueId))!;
  await transactIssues([triageAction(issueId, { notes }, issue.triage_version, 'tester')]);
}

describe('regrouping stored alerts', () => {
  it('a second run writes nothing', async () => {
    const c = await newCluster();
    await alert(c, 'DiskHigh', 300, 250);
    await alert(c, 'DiskHigh', 200, null);
    expect(await regroupClusters([c], NOW)).toMatchObject({ created: 1, failed: 0 });
    const before = await issuesOf(c);
    expect(await regroupClusters([c], NOW)).toMatchObject({ created: 0, updated: 0, removed: 0, unchanged: 1 });
    expect(await issuesOf(c)).toEqual(before);
  });

  it('an alert arriving late with an earlier start keeps the issue id and its triage', async () => {
    const c = await newCluster();
    await alert(c, 'Lag', 100, null);
    await regroupClusters([c], NOW);
    const [issue] = await issuesOf(c);
    await triage(issue!.issue_id, 'on it');
    await alert(c, 'Lag', 130, 120); // started before the issue's first alert, delivered now
    expect(await regroupClusters([c], NOW)).toMatchObject({ updated: 1, created: 0, removed: 0 });
    const after = await issuesOf(c);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ issue_id: issue!.issue_id, notes: 'on it', alert_count: 2, first_seen: minutesAgo(130) });
    expect(await regroupClusters([c], NOW)).toMatchObject({ updated: 0, created: 0, unchanged: 1 });
  });

  it('an alert bridging two issues merges them: the triaged one keeps its id, the other goes', async () => {
    const c = await newCluster();
    await alert(c, 'Lag', 600, 590);
    await alert(c, 'Lag', 400, 390); // 190 minutes later: within the 4-hour join window, the same issue
    await regroupClusters([c], NOW);
    expect(await issuesOf(c)).toHaveLength(1);
    await alert(c, 'Lag', 60, 50); // 330 minutes after the last resolution: a second issue
    await regroupClusters([c], NOW);
    const [first, second] = await issuesOf(c);
    expect(second).toBeDefined();
    await triage(second!.issue_id, 'triaged');
    await alert(c, 'Lag', 250, 200); // bridges B (ended 390) and C (starts 60)
    expect(await regroupClusters([c], NOW)).toMatchObject({ removed: 1 });
    const merged = await issuesOf(c);
    expect(merged).toHaveLength(1);
    expect(merged[0]).toMatchObject({ issue_id: second!.issue_id, notes: 'triaged', alert_count: 4, first_seen: first!.first_seen });
    expect(await getIssue(first!.issue_id)).toBeUndefined(); // untriaged: deleted
  });

  it('an issue that splits (a late earlier alert joined it, then resolved) goes on as the part with its id, and the cluster still groups', async () => {
    const c = await newCluster();
    const later = new Date(NOW.getTime() + 1000);
    await alert(c, 'Lag', 60, null, 'b');
    await regroupClusters([c], NOW);
    const [issue] = await issuesOf(c);
    await alert(c, 'Lag', 600, null, 'a'); // started 10 hours ago, first delivered now, firing: joins the issue
    await regroupClusters([c], NOW);
    expect(await issuesOf(c)).toMatchObject([{ issue_id: issue!.issue_id, alert_count: 2, first_seen: minutesAgo(600) }]);
    await alert(c, 'Lag', 600, 590, 'a', later); // it ended 9 h 50 ago: b, more than 4 hours after, is an issue of its own again
    expect(await regroupClusters([c], NOW)).toMatchObject({ failed: 0, created: 1, updated: 1 });
    const [first, second] = await issuesOf(c);
    expect(first).toMatchObject({ alert_count: 1, status: 'Resolved', first_seen: minutesAgo(600) });
    expect(second).toMatchObject({ issue_id: issue!.issue_id, alert_count: 1, status: 'Ongoing', first_seen: minutesAgo(60) });
    // The cluster's next alerts are grouped: the split failed every later pass of it.
    await alert(c, 'NodeDown', 5, null);
    expect(await regroupClusters([c], NOW)).toMatchObject({ failed: 0, created: 1 });
    expect(await regroupClusters([c], NOW)).toMatchObject({ failed: 0, created: 0, updated: 0, removed: 0 });
  });

  it('an issue split twice (its own first alert left in a part it no longer overlaps) still goes on as that part, and the cluster still groups', async () => {
    const c = await newCluster();
    let stamp = NOW.getTime();
    const deliver = async (startedAgo: number, endedAgo: number | null, fingerprint: string) => {
      await alert(c, 'Lag', startedAgo, endedAgo, fingerprint, new Date(++stamp));
      return regroupClusters([c], NOW);
    };
    await deliver(30, null, 'w1');
    const [w] = await issuesOf(c);
    await deliver(600, null, 'e'); // late, started earlier: joins w
    await deliver(300, null, 'd');
    expect(await deliver(600, 590, 'e')).toMatchObject({ failed: 0 }); // e alone; d and w1 together (d first)
    expect(await deliver(300, 300, 'd')).toMatchObject({ failed: 0 }); // e, d and w1 each alone
    const issues = await issuesOf(c);
    expect(issues.map((i) => [i.first_seen, i.alert_count, i.status])).toEqual([
      [minutesAgo(600), 1, 'Resolved'],
      [minutesAgo(300), 1, 'Resolved'],
      [minutesAgo(30), 1, 'Ongoing'],
    ]);
    expect(issues[2]!.issue_id).toBe(w!.issue_id);
    expect(await regroupClusters([c], NOW)).toMatchObject({ failed: 0, created: 0, updated: 0, removed: 0 });
  });

  it('a triaged issue that absorbed another splits again with a narrower join window: its triage stays with its own alerts', async () => {
    const c = await newCluster();
    await alert(c, 'Lag', 900, 890, 'x');
    await alert(c, 'Lag', 300, 290, 'y');
    await regroupClusters([c], NOW);
    const [, y] = await issuesOf(c);
    await triage(y!.issue_id, 'ticket OPS-1 is about y');
    const setWindow = async (minutes: number) => {
      const text = defaultRuleText('issue-rules').replace('join_window_minutes: 240', `join_window_minutes: ${minutes}`);
      const checked = checkRuleText('issue-rules', text);
      if (!checked.ok) throw new Error(checked.message);
      await writeRuleSetVersion('issue-rules', text, checked.value, (await getCurrentRuleSet('issue-rules'))?.version ?? 0, 'test');
    };
    try {
      await setWindow(720);
      await regroupClusters([c], NOW);
      expect(await issuesOf(c)).toMatchObject([{ issue_id: y!.issue_id, alert_count: 2, notes: 'ticket OPS-1 is about y' }]);
      await setWindow(240);
      expect(await regroupClusters([c], NOW)).toMatchObject({ failed: 0 });
      const [xPart, yPart] = await issuesOf(c);
      expect(xPart).toMatchObject({ first_seen: minutesAgo(900), alert_count: 1, notes: '' });
      expect(yPart).toMatchObject({ issue_id: y!.issue_id, first_seen: minutesAgo(300), alert_count: 1, notes: 'ticket OPS-1 is about y' });
      expect(await regroupClusters([c], NOW)).toMatchObject({ failed: 0, created: 0, updated: 0, removed: 0 });
    } finally {
      await setWindow(240);
    }
  });

  /** Runs `body` under the issue rules with these grouping keys, then puts the default rules back. */
  async function withKeys(keys: string, body: () => Promise<void>) {
    const base = (await getCurrentRuleSet('issue-rules'))?.version ?? 0;
    const text = defaultRuleText('issue-rules').replace('keys: [cluster, alert_name]', `keys: ${keys}`);
    const checked = checkRuleText('issue-rules', text);
    if (!checked.ok) throw new Error(checked.message);
    await writeRuleSetVersion('issue-rules', text, checked.value, base, 'test');
    try {
      await body();
    } finally {
      const current = (await getCurrentRuleSet('issue-rules'))!;
      const original = defaultRuleText('issue-rules');
      const back = checkRuleText('issue-rules', original);
      if (back.ok) await writeRuleSetVersion('issue-rules', original, back.value, current.version, 'test');
    }
  }

  it('edited grouping keys: the triaged issue goes on as the one holding its alerts, an untriaged one goes, and the next run is quiet', async () => {
    const c = await newCluster();
    await alert(c, 'A', 100, null);
    await alert(c, 'B', 90, null);
    await regroupClusters([c], NOW);
    const [a, b] = await issuesOf(c);
    await triage(a!.issue_id, 'keep me');
    await withKeys('[cluster]', async () => {
      expect(await regroupClusters([c], NOW)).toMatchObject({ created: 0, updated: 1, removed: 1 });
      const live = (await issuesOf(c)).filter((i) => !i.superseded_by);
      expect(live).toHaveLength(1);
      expect(live[0]).toMatchObject({ issue_id: a!.issue_id, issue_name: 'A, B', alert_count: 2, notes: 'keep me', group_key: `cluster=${c}` });
      expect(await getIssue(b!.issue_id)).toBeUndefined();
      expect(await regroupClusters([c], NOW)).toMatchObject({ created: 0, updated: 0, removed: 0 });
    });
    expect(NO_SUCCESSOR).toBe('regrouped');
  });

  it('edited grouping keys and back: a ticketed issue folded into another names it as successor, and both come back with their triage', async () => {
    const c = await newCluster();
    await alert(c, 'A', 100, null);
    await alert(c, 'B', 90, null);
    await regroupClusters([c], NOW);
    const [a, b] = await issuesOf(c);
    await triage(a!.issue_id, 'on A');
    await triage(b!.issue_id, 'on B');
    const withTicket = (await getIssue(b!.issue_id))!;
    await transactIssues([
      triageAction(b!.issue_id, { ticket_key: 'OPS-20', ticket_url: 'https://jira.example/browse/OPS-20' }, withTicket.triage_version, 'tester'),
    ]);
    await withKeys('[cluster]', async () => {
      // Both are triaged: the ticketed one goes on as the cluster's issue (create-ticket there is a 409 naming OPS-20, not a
      // second ticket), and the other is folded into it, not "regrouped" into nothing.
      expect(await regroupClusters([c], NOW)).toMatchObject({ created: 0, updated: 1, removed: 1 });
      expect(await getIssue(b!.issue_id)).toMatchObject({ issue_name: 'A, B', notes: 'on B', ticket_key: 'OPS-20', superseded_by: null });
      expect(await getIssue(a!.issue_id)).toMatchObject({ status: 'Resolved', superseded_by: b!.issue_id, notes: 'on A' });
    });
    // Keyed by alert name again: each issue goes on as its own alerts', B's ticket live again, no issue made twice.
    expect(await regroupClusters([c], NOW)).toMatchObject({ created: 0, updated: 2, removed: 0 });
    const live = (await issuesOf(c)).filter((i) => !i.superseded_by);
    expect(live.map((i) => [i.issue_id, i.issue_name, i.notes, i.ticket_key])).toEqual([
      [a!.issue_id, 'A', 'on A', ''],
      [b!.issue_id, 'B', 'on B', 'OPS-20'],
    ]);
    expect(await regroupClusters([c], NOW)).toMatchObject({ created: 0, updated: 0, removed: 0 });
  });

  it('a late resolution of a firing alert resolves the issue once the quiet period has passed', async () => {
    const c = await newCluster();
    await alert(c, 'NodeDown', 200, null, 'node-down');
    await regroupClusters([c], NOW);
    expect((await issuesOf(c))[0]).toMatchObject({ status: 'Ongoing', severity: 'Critical' });
    await alert(c, 'NodeDown', 200, 100, 'node-down'); // the resolved notification, late
    await regroupClusters([c], NOW);
    expect((await issuesOf(c))[0]).toMatchObject({ status: 'Resolved', resolved_at: minutesAgo(100) });
  });

  it('concurrent runs on one cluster end in the same issues as one run, without duplicates', async () => {
    const c = await newCluster();
    for (let i = 0; i < 6; i++) await alert(c, `Alert${i % 3}`, 300 - i * 20, i % 2 ? null : 250 - i * 20);
    const results = await Promise.all([1, 2, 3].map(() => regroupClusters([c], NOW)));
    expect(results.every((r) => r.failed === 0)).toBe(true);
    const issues = await issuesOf(c);
    expect(issues.map((i) => i.issue_name).sort()).toEqual(['Alert0', 'Alert1', 'Alert2']);
    expect(await regroupClusters([c], NOW)).toMatchObject({ created: 0, updated: 0, removed: 0 });
  });
});
