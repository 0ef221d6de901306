// AI issues whose alerts all started before the grouping's 7-day window (history: no grouping holds
// them any more), on DynamoDB Local, rules grouping (no LLM provider): the scheduled pass visits the
// clusters of Ongoing issues too, and resolves such an issue once every alert it links has ended, at
// the last end; one whose alert still fires stays Ongoing.
import { beforeAll, describe, expect, it } from 'vitest';
import { AI_WINDOW_DAYS, regroupAiClusters, regroupAiRecent } from '../../shared/ai-issues/regroup.js';
import { getAiIssue, listAiIssuesActiveSince } from '../../shared/db/ai-issues.js';
import { ingestAlerts } from '../../shared/fleet/ingest.js';
import { alertNotice, storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';

const DAY_MS = 86_400_000;
const NOW = new Date();
/** When the alert started firing and was first grouped: 10 days ago, past the window by now. */
const THEN = new Date(NOW.getTime() - (AI_WINDOW_DAYS + 3) * DAY_MS);

beforeAll(async () => {
  await useTestTables();
  delete process.env.LLM_PROVIDER;
});

/** A cluster whose disk alert fired from 10 minutes before THEN, grouped then into one Ongoing AI issue; its id. */
async function issueGroupedThen(): Promise<{ cluster: string; issueId: string }> {
  const cluster = await storedCluster();
  await ingestAlerts([alertNotice(THEN, cluster, 'DiskUsageHigh', `fp-${cluster}`, 10)], THEN);
  expect(await regroupAiClusters([cluster], THEN)).toMatchObject({ regrouped: 1, failed: 0 });
  const [issue] = (await listAiIssuesActiveSince(THEN)).filter((i) => i.cluster_id === cluster);
  expect(issue).toMatchObject({ status: 'Ongoing', resolved_at: null });
  return { cluster, issueId: issue!.issue_id };
}

const ongoingOf = async (cluster: string) => (await listAiIssuesActiveSince(NOW)).filter((i) => i.cluster_id === cluster && i.status === 'Ongoing');

describe('an AI issue whose alerts all left the window', () => {
  it('is resolved by the scheduled pass once its alert has ended, at the alert’s end', async () => {
    const { cluster, issueId } = await issueGroupedThen();
    // The alert resolved a day ago, long after it left the window: the cluster has no alert in the window.
    const ended = new Date(NOW.getTime() - DAY_MS);
    const endedAgo = (THEN.getTime() - ended.getTime()) / 60_000;
    await ingestAlerts([alertNotice(THEN, cluster, 'DiskUsageHigh', `fp-${cluster}`, 10, endedAgo)], NOW);

    await regroupAiRecent(NOW);
    expect(await getAiIssue(issueId)).toMatchObject({ status: 'Resolved', resolved_at: ended.toISOString() });
    expect(await ongoingOf(cluster)).toEqual([]);
    // Resolved a day ago: in a window of two days, out of today's.
    expect((await listAiIssuesActiveSince(new Date(NOW.getTime() - 2 * DAY_MS))).map((i) => i.issue_id)).toContain(issueId);
    expect((await listAiIssuesActiveSince(new Date(NOW.getTime() - DAY_MS / 2))).map((i) => i.issue_id)).not.toContain(issueId);
  });

  it('stays Ongoing while its alert still fires, and is resolved by the pass after the alert ends', async () => {
    const { cluster, issueId } = await issueGroupedThen();
    await regroupAiRecent(NOW);
    expect((await ongoingOf(cluster)).map((i) => i.issue_id)).toEqual([issueId]);

    const endedAgo = (THEN.getTime() - NOW.getTime()) / 60_000 + 5; // ended 5 minutes ago
    await ingestAlerts([alertNotice(THEN, cluster, 'DiskUsageHigh', `fp-${cluster}`, 10, endedAgo)], NOW);
    await regroupAiRecent(NOW);
    expect(await getAiIssue(issueId)).toMatchObject({ status: 'Resolved', resolved_at: new Date(NOW.getTime() - 5 * 60_000).toISOString() });
  });
});
