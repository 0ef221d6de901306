// AI regrouping and triage of the AI issues it replaces, raced on the wire: the proxy holds one side's
// write until the other side has run. A PATCH of an AI issue regrouping retired (also meanwhile) is a
// 409 naming the live one; a triage saved between a pass's read and its retire keeps the issue in view.
// Rules grouping (no LLM provider): disk alerts within 2 hours of each other form one AI issue.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../shared/auth/principal.js';
import { updateAiTriage } from '../../shared/ai-issues/queries.js';
import { regroupAiClusters } from '../../shared/ai-issues/regroup.js';
import { getAiIssue, listAiIssuesActiveSince } from '../../shared/db/ai-issues.js';
import { ingestAlerts } from '../../shared/fleet/ingest.js';
import { Conflict } from '../../shared/http/errors.js';
import { alertNotice, storedCluster } from '../support/clusters.js';
import { type DynamoProxy, type WireRequest, whileHeld } from '../support/dynamo-proxy.js';
import { useTestTables } from '../support/dynamo.js';

const NOW = new Date();
const admin: Principal = { userId: 'u-racer', username: 'racer', name: 'Racer', email: 'racer@example.com', role: 'admin' };
const caller = { ip: '127.0.0.1', userAgent: 'vitest' };

let proxy: DynamoProxy;

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  delete process.env.LLM_PROVIDER;
});

/** A resolved disk alert of the cluster, starting `startedAgo` minutes ago and lasting 5. */
const disk = (clusterId: string, fingerprint: string, startedAgo: number) =>
  alertNotice(NOW, clusterId, 'DiskUsageHigh', fingerprint, startedAgo, startedAgo - 5);

const liveIssuesOf = async (clusterId: string) =>
  (await listAiIssuesActiveSince(new Date(NOW.getTime() - 86_400_000))).filter((i) => i.cluster_id === clusterId);

/** Holds the first request `matches` picks until `meanwhile`, started right then, has run (as in test/issues/regroup-races.test.ts). */

/**
 * Two AI issues of a cluster: `larger` (disk alerts 420 and 400 minutes ago) and `smaller` (200 minutes ago),
 * more than the 2-hour gap apart. `bridge` adds one 300 minutes ago and regroups: one group of all four,
 * which shares more alerts with `larger`.
 */
async function twoAiIssues() {
  const c = await storedCluster();
  await ingestAlerts([disk(c, 'd-1', 420), disk(c, 'd-2', 400), disk(c, 'd-3', 200)], NOW);
  expect(await regroupAiClusters([c], NOW)).toMatchObject({ regrouped: 1, failed: 0 });
  const issues = await liveIssuesOf(c);
  const larger = issues.find((i) => i.alert_count === 2)!.issue_id;
  const smaller = issues.find((i) => i.alert_count === 1)!.issue_id;
  const bridge = async () => {
    await ingestAlerts([disk(c, 'd-bridge', 300)], NOW);
    return regroupAiClusters([c], NOW);
  };
  return { c, larger, smaller, bridge };
}

const triageOf = (id: string) => (r: WireRequest) =>
  r.operation === 'TransactWriteItems' && JSON.stringify(r.input).includes('issue_update') && JSON.stringify(r.input).includes(id);

describe('a triage saved while AI regrouping retires its issue', () => {
  it('is refused with a 409 naming the live AI issue, and changes nothing; so is one of an issue retired before', async () => {
    const { c, larger, smaller, bridge } = await twoAiIssues();
    // Both triaged: the group continues the larger, the smaller is kept as history, superseded.
    await updateAiTriage(admin, larger, { notes: 'looking' }, caller, NOW);
    await updateAiTriage(admin, smaller, { notes: 'first look' }, caller, NOW);
    const race = whileHeld(proxy, triageOf(smaller), bridge);
    const answer = await updateAiTriage(admin, smaller, { notes: 'second look', triage_status: 'Investigating' }, caller, NOW).catch((e: unknown) => e);
    expect(await race.done()).toMatchObject({ regrouped: 1, failed: 0 });
    expect(answer).toBeInstanceOf(Conflict);
    expect((answer as Conflict).extra).toMatchObject({ superseded_by: larger });
    expect(await getAiIssue(smaller)).toMatchObject({ superseded_by: larger, notes: 'first look', triage_status: '' });
    expect((await liveIssuesOf(c)).map((i) => [i.issue_id, i.alert_count, i.notes])).toEqual([[larger, 4, 'looking']]);

    // Asked again of the retired issue (a page open since): refused likewise.
    const again = await updateAiTriage(admin, smaller, { notes: 'third look' }, caller, NOW).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(Conflict);
    expect((again as Conflict).extra).toMatchObject({ superseded_by: larger });
    expect((await getAiIssue(smaller))!.notes).toBe('first look');
  });
});

describe('a triaged AI issue continues the group it shares alerts with', () => {
  it('before an untriaged one that shares more', async () => {
    const { c, larger, smaller, bridge } = await twoAiIssues();
    await updateAiTriage(admin, smaller, { assignee: 'me', notes: 'mine' }, caller, NOW);
    expect(await bridge()).toMatchObject({ regrouped: 1, failed: 0 });
    expect((await liveIssuesOf(c)).map((i) => [i.issue_id, i.alert_count, i.assignee, i.notes])).toEqual([[smaller, 4, 'racer', 'mine']]);
    expect(await getAiIssue(larger)).toBeUndefined(); // untriaged: deleted
  });

  it('also when triaged between the pass reading it and retiring it: the pass matches again', async () => {
    const { c, larger, smaller, bridge } = await twoAiIssues();
    // As read, neither is triaged: the group continues the larger, and the smaller is deleted. The delete is
    // held until a triage of the smaller has landed.
    const deleteOf = (id: string) => (r: WireRequest) => r.operation === 'DeleteItem' && r.input.Key?.pk?.S === `AIISSUE#${id}`;
    const race = whileHeld(proxy, deleteOf(smaller), () => updateAiTriage(admin, smaller, { notes: 'mine', triage_status: 'Investigating' }, caller, NOW));
    expect(await bridge()).toMatchObject({ regrouped: 1, failed: 0 });
    expect(await race.done()).toMatchObject({ body: { status: 'ok' } });
    // The triage is in view, on the issue holding every alert; the one this run first continued is gone.
    expect((await liveIssuesOf(c)).map((i) => [i.issue_id, i.alert_count, i.notes, i.triage_status])).toEqual([[smaller, 4, 'mine', 'Investigating']]);
    expect(await getAiIssue(larger)).toBeUndefined();
    expect(await regroupAiClusters([c], NOW)).toMatchObject({ unchanged: 1 });
  });
});
