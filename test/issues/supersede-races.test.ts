// A triage saved between a regrouping's read and its supersede write, made to happen on the wire: the
// proxy holds the supersede until the PATCH has landed. The pass ranked the issue by the triage it read,
// so its write must not hide a triage it never saw: it reads again and keeps the triaged issue.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../shared/auth/principal.js';
import { claimTicket, getIssue, listClusterIssues, listIssuesActiveSince } from '../../shared/db/issues.js';
import { ingestAlerts } from '../../shared/fleet/ingest.js';
import { updateTriage } from '../../shared/issues/triage.js';
import { alertNotice, storedCluster } from '../support/clusters.js';
import { type DynamoProxy, type WireRequest, whileHeld } from '../support/dynamo-proxy.js';
import { useTestTables } from '../support/dynamo.js';

const NOW = new Date();
const admin: Principal = { userId: 'u-racer', username: 'racer', name: 'Racer', email: 'racer@example.com', role: 'admin' };
const caller = { ip: '127.0.0.1', userAgent: 'vitest' };

let proxy: DynamoProxy;

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
});

/** A resolved Lag alert of the cluster, from `startedAgo` to `endedAgo` minutes ago. */
const lag = (clusterId: string, fingerprint: string, startedAgo: number, endedAgo: number) =>
  alertNotice(NOW, clusterId, 'Lag', fingerprint, startedAgo, endedAgo);

/** Holds the first request `matches` picks until `meanwhile`, started right then, has run (as in regroup-races.test.ts). */

describe('a triage saved while regrouping supersedes its issue', () => {
  it('the pass reads again and keeps the issue triaged meanwhile, the untriaged one going', async () => {
    // Two issues of one alert, 10 and 1 hour ago (more than the join window apart); neither triaged, the newer
    // one with a ticket being created (a claim: kept, not deleted, when folded). A bridging alert merges them:
    // as read, the older keeps the group (its id), and the newer is superseded.
    const c = await storedCluster();
    await ingestAlerts([lag(c, 'lag-old', 600, 590), lag(c, 'lag-new', 60, 50)], NOW);
    const [older, newer] = (await listClusterIssues(c)).sort((a, b) => (a.first_seen < b.first_seen ? -1 : 1)).map((i) => i.issue_id);
    await claimTicket(newer!, 'a-create-ticket-call', new Date(NOW.getTime() - 60_000), NOW);

    const supersedeOf = (id: string) => (r: WireRequest) =>
      r.operation === 'UpdateItem' && r.input.Key?.pk?.S === `ISSUE#${id}` && String(r.input.UpdateExpression).includes('superseded_by = :by');
    const race = whileHeld(proxy, supersedeOf(newer!), () => updateTriage(admin, newer!, { notes: 'mine', triage_status: 'Investigating' }, caller, NOW));
    const bridged = await ingestAlerts([lag(c, 'lag-bridge', 400, 250)], NOW);
    expect(await race.done()).toMatchObject({ body: { status: 'updated' } });
    expect(bridged.rejected).toEqual([]);

    // The triaged issue holds the alerts, in view; the untriaged one is gone.
    expect(await getIssue(newer!)).toMatchObject({ superseded_by: null, notes: 'mine', triage_status: 'Investigating', alert_count: 3 });
    expect(await getIssue(older!)).toBeUndefined();
    const listed = (await listIssuesActiveSince(new Date(NOW.getTime() - 86_400_000))).filter((i) => i.cluster_id === c);
    expect(listed.map((i) => [i.issue_id, i.notes])).toEqual([[newer, 'mine']]);
  });
});
