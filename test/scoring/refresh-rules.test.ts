// A recompute pressed after a rule change is answered from the current rules (spec §4:
// "recomputes health scores from the current rules"), never by joining a run whose worker
// loaded the rules before the change: its run is queued after that one, starts once it has
// ended (never beside it), and later presses join the queued run. Through the settings
// handler and the real recompute worker, run in-process, on DynamoDB Local; a proxy holds the
// first run's fleet read (its rules are loaded by then) while the proposal is approved.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as recomputeWorker } from '../../functions/recompute.js';
import { handler as settings } from '../../functions/settings.js';
import { lockHolder } from '../../shared/db/locks.js';
import { getCurrentRuleSet } from '../../shared/db/rules.js';
import { getRefresh, listSnapshots } from '../../shared/db/scores.js';
import { defaultRuleText } from '../../shared/rules/defaults.js';
import { refreshLockName } from '../../shared/scoring/refresh-claim.js';
import { localWorkersSettled, registerLocalWorker } from '../../shared/worker-invoke.js';
import { storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';
import { tableOf, whileHeld, type DynamoProxy, type WireRequest } from '../support/dynamo-proxy.js';
import { call, type Handler } from '../support/events.js';
import { userToken, useTestJwtSecret } from '../support/tokens.js';

let proxy: DynamoProxy;
const tokens = { admin: '', superadmin: '' };

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  useTestJwtSecret();
  tokens.admin = await userToken('admin', 'recompute-admin');
  tokens.superadmin = await userToken('superadmin', 'recompute-super');
  await storedCluster();
  await storedCluster();
  // Every POST answers 202 at once; the runs are followed by their ids.
  process.env.REFRESH_WAIT_SECONDS = '0';
  registerLocalWorker('recompute', (event) => recomputeWorker(event as Parameters<typeof recomputeWorker>[0]));
});

afterAll(() => {
  delete process.env.REFRESH_WAIT_SECONDS;
});

function request(who: keyof typeof tokens, method: string, path: string, routePath: string, body?: unknown) {
  const params = /config-changes\/([^/]+)/.exec(path)?.[1] ?? /recompute\/([^/]+)/.exec(path)?.[1];
  return call(settings as Handler, {
    method,
    path,
    routeKey: `${method} ${routePath}`,
    ...(params === undefined ? {} : { params: routePath.includes('{change_id}') ? { change_id: params } : { refresh_id: params } }),
    headers: { authorization: `Bearer ${tokens[who]}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}
/** POST /api/settings/recompute: the run's id (202, answered at once). */
async function recompute(): Promise<string> {
  const res = await request('admin', 'POST', '/api/settings/recompute', '/api/settings/recompute');
  expect(res.statusCode, res.body).toBe(202);
  return String(res.json!.refresh_id);
}
const follow = (id: string) => request('admin', 'GET', `/api/settings/recompute/${id}`, '/api/settings/recompute/{refresh_id}');

/** A read of the fleet's data (inventory, rollups, alerts): a run makes it once its rules are loaded. */
const fleetRead = (r: WireRequest) => /-(clusters|metrics|alerts)$/.test(tableOf(r));
/** The health rules version the snapshot a run persisted was computed with. */
async function rulesVersionOf(id: string): Promise<unknown> {
  const generatedAt = (await getRefresh(id))?.figures?.generated_at;
  return (await listSnapshots('fleet')).find((s) => s.generated_at === generatedAt)?.summary.rules_version;
}

describe('a recompute pressed after a proposal was approved', () => {
  it('does not join the run under way that loaded the rules before: its own run follows it, with the new rules', async () => {
    const before = (await getCurrentRuleSet('health-rules'))?.version ?? 0;
    const proposed = await request('admin', 'PUT', '/api/settings/health-rules', '/api/settings/health-rules', {
      content: `# proposed\n${defaultRuleText('health-rules')}`,
    });
    expect(proposed.json, proposed.body).toMatchObject({ status: 'pending' });
    const presses: string[] = [];
    const held = whileHeld(proxy, fleetRead, async () => {
      // The first run's worker has loaded version `before`; the approval is acknowledged (version + 1)…
      const approved = await request(
        'superadmin',
        'POST',
        `/api/settings/config-changes/${proposed.json!.change_id}/review`,
        '/api/settings/config-changes/{change_id}/review',
        {
          action: 'approve',
          note: '',
        },
      );
      expect(approved.json, approved.body).toMatchObject({ status: 'approved', version: before + 1 });
      // …and recompute is pressed twice more.
      presses.push(await recompute(), await recompute());
    });
    const first = await recompute();
    await localWorkersSettled(); // the first run, and the run queued after it
    await held.done();
    const [second, third] = presses as [string, string];
    expect(second).not.toBe(first);
    // The third press joins the queued run: N presses, one more run.
    expect(third).toBe(second);

    for (const id of [first, second]) expect((await follow(id)).statusCode).toBe(200);
    expect(await rulesVersionOf(first)).toBe(before);
    expect(await rulesVersionOf(second)).toBe(before + 1);
    // Never two runs of the claim at once: the queued run was taken up once the first had finished.
    const [ran, queued] = [await getRefresh(first), await getRefresh(second)];
    expect(queued!.worker_started_at! >= ran!.finished_at!).toBe(true);
    // And it let go of the claim: the next press starts afresh.
    expect(await lockHolder(refreshLockName(['fleet', 'health']))).toBeUndefined();
  });
});
