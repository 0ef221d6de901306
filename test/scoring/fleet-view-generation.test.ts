// The fleet view's cache (fleet-view.ts) against rule changes, through DynamoDB Local with a
// proxy that holds one of the view's fleet reads (its rules are loaded by then) while a
// superadmin's rule write lands: a read that starts after the write is acknowledged never
// answers the rules before it, whether it would have joined a computation already under way
// or found a refresh's view cached under the newer generation.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { Principal } from '../../shared/auth/principal.js';
import { getCurrentRuleSet } from '../../shared/db/rules.js';
import { deleteItem } from '../../shared/db/client.js';
import { currentGeneration } from '../../shared/db/scores.js';
import { defaultRuleText } from '../../shared/rules/defaults.js';
import { submitRuleSet } from '../../shared/rules/editing.js';
import { dropFleetViewCache, fleetView, refreshFleetView, type FleetView } from '../../shared/scoring/fleet-view.js';
import { storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';
import { tableOf, whileHeld, type DynamoProxy, type WireRequest } from '../support/dynamo-proxy.js';

const SUPER: Principal = { userId: 'u-super', username: 'view-super', name: 'Super', email: 'super@example.com', role: 'superadmin' };
const CALLER = { ip: '127.0.0.1', userAgent: 'vitest' };

let proxy: DynamoProxy;

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  await storedCluster();
});

/** A read of the fleet's data (inventory, rollups, alerts): a computation makes it once its rules are loaded. */
const fleetRead = (request: WireRequest) => /-(clusters|metrics|alerts)$/.test(tableOf(request));
const healthVersion = async () => (await getCurrentRuleSet('health-rules'))?.version ?? 0;
/** A superadmin's write of the health rules (the shipped text: any write makes a version). */
// Each write another text: a save of the text in force changes nothing.
let writes = 0;
const writeHealthRules = () => submitRuleSet(SUPER, 'health-rules', `# write ${++writes}\n${defaultRuleText('health-rules')}`, CALLER);

/** Resolves once the proxy has seen a read of the fleet view's cache generation. */
function generationRead(): Promise<void> {
  return new Promise((resolve) => {
    const stop = proxy.observe(({ operation, input }) => {
      if (operation === 'GetItem' && String(input.TableName).endsWith('-scores') && input.Key?.pk?.S === 'CACHE') {
        stop();
        resolve();
      }
    });
  });
}

describe('the cached fleet view after a rule change', () => {
  it('a read started after the write does not join a computation that loaded the rules before it', async () => {
    dropFleetViewCache();
    const before = await healthVersion();
    let second: Promise<FleetView> | undefined;
    const held = whileHeld(proxy, fleetRead, async () => {
      // The first computation has loaded version `before`; now the write is acknowledged (version + 1)…
      expect(await writeHealthRules()).toMatchObject({ applied: true, version: before + 1 });
      // …and another read of this container starts: it reads the generation (the write moved it).
      const seen = generationRead();
      second = fleetView();
      await seen;
      // Two round trips of our own after its read went out: its answer is in before the first read goes on.
      await currentGeneration();
      await currentGeneration();
    });
    const first = await fleetView();
    await held.done();
    expect(first.health.version).toBe(before);
    expect((await second!).health.version).toBe(before + 1);
    // And from then on, the new rules' view is the one cached.
    expect((await fleetView()).health.version).toBe(before + 1);
  });

  it('a refresh that loaded the rules before a write does not leave its view cached under the newer generation', async () => {
    const before = await healthVersion();
    const held = whileHeld(proxy, fleetRead, writeHealthRules);
    const refreshed = await refreshFleetView(['fleet']);
    await held.done();
    expect(refreshed.health.version).toBe(before);
    // The refresh bumped the generation after the write did: its view must not answer for it.
    expect((await fleetView()).health.version).toBe(before + 1);
  });

  it('a refresh that nothing overtook is this container’s cached view', async () => {
    const refreshed = await refreshFleetView(['fleet']);
    expect(await fleetView()).toBe(refreshed);
  });

  it('a marker that went back (its table recreated) is a new start: the next view is cached, not computed on every read', async () => {
    await refreshFleetView(['fleet']);
    expect(await currentGeneration()).toBeGreaterThan(0);
    await deleteItem('scores', { pk: 'CACHE', sk: 'GENERATION' });
    const first = await fleetView();
    let reads = 0;
    const stop = proxy.observe((request) => void (fleetRead(request) && reads++));
    try {
      expect(await fleetView()).toBe(first);
    } finally {
      stop();
    }
    expect(reads).toBe(0);
  });
});

describe("the cached fleet view's age", () => {
  it('counts from when its data was read, not from when its computation ended', async () => {
    dropFleetViewCache();
    const start = Date.now();
    vi.useFakeTimers({ toFake: ['Date'], now: start });
    try {
      // The computation takes 30 s (a cold container's large fleet): the clock moves while its data is read.
      let moved = false;
      const stop = proxy.observe((request) => {
        if (!moved && fleetRead(request)) {
          moved = true;
          vi.setSystemTime(start + 30_000);
        }
      });
      const view = await fleetView().finally(stop);
      expect(moved).toBe(true);
      expect(view.now.getTime()).toBe(start);
      vi.setSystemTime(start + 59_000);
      expect(await fleetView()).toBe(view);
      // 61 s after its data was read: too old to answer, however recently it was finished.
      vi.setSystemTime(start + 61_000);
      expect(await fleetView()).not.toBe(view);
    } finally {
      vi.useRealTimers();
    }
  });
});
