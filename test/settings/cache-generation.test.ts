// A rule write, a proposal's approval and a general-settings save move the fleet view's cache
// generation in their own transaction (shared/rules/editing.ts, shared/settings/general.ts):
// once one is acknowledged, every container's next read recomputes, even where a lone move of
// the marker would have failed; one that fails moves nothing. Through DynamoDB Local, with a
// proxy refusing any lone move of the marker and holding a write while another lands.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../shared/auth/principal.js';
import { getCurrentRuleSet } from '../../shared/db/rules.js';
import { currentGeneration } from '../../shared/db/scores.js';
import { Conflict } from '../../shared/http/errors.js';
import { defaultRuleText } from '../../shared/rules/defaults.js';
import { reviewConfigChange, submitRuleSet } from '../../shared/rules/editing.js';
import { updateGeneralSettings } from '../../shared/settings/general.js';
import { useTestTables } from '../support/dynamo.js';
import { requestsOf, whileHeld, type DynamoProxy, type WireRequest } from '../support/dynamo-proxy.js';

const person = (role: Principal['role'], username: string): Principal => ({
  userId: `u-${username}`,
  username,
  name: username,
  email: `${username}@example.com`,
  role,
});
const SUPER = person('superadmin', 'gen-super');
const ADMIN = person('admin', 'gen-admin');
const CALLER = { ip: '127.0.0.1', userAgent: 'vitest' };

let proxy: DynamoProxy;
let stopRefusing: () => void = () => undefined;

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
});

afterEach(() => stopRefusing());

/** The generation marker's key, as DynamoDB receives it. */
const isMarker = (key: Record<string, any> | undefined) => key?.pk?.S === 'CACHE' && key?.sk?.S === 'GENERATION';
const onScores = (input: Record<string, any>) => String(input.TableName).endsWith('-scores');
/** A lone move of the marker (an UpdateItem of its own) is refused, as a throttled or denied write would be. */
function refuseLoneMoves(): void {
  stopRefusing = proxy.watch(({ operation, input }) =>
    operation === 'UpdateItem' && onScores(input) && isMarker(input.Key) ? { type: 'AccessDeniedException', message: 'no lone moves here' } : undefined,
  );
}
/** Whether a transaction moves the marker among its actions. */
const movesMarker = (request: WireRequest) =>
  request.operation === 'TransactWriteItems' && request.input.TransactItems.some((a: any) => a.Update && onScores(a.Update) && isMarker(a.Update.Key));
const version = async (name: 'health-rules' | 'risk-rules') => (await getCurrentRuleSet(name))?.version ?? 0;
/** The shipped text with a comment naming the write: a save of the text in force changes nothing, so each write changes it. */
const edited = (name: 'health-rules' | 'risk-rules', why: string) => `# ${why}\n${defaultRuleText(name)}`;

describe('the cache generation moves with the change, in its transaction', () => {
  it('a superadmin’s rule write', async () => {
    refuseLoneMoves();
    const before = await currentGeneration();
    const { result, requests } = await requestsOf(proxy, () => submitRuleSet(SUPER, 'health-rules', edited('health-rules', 'a superadmin write'), CALLER));
    expect(result).toMatchObject({ applied: true });
    expect(requests.filter(movesMarker)).toHaveLength(1);
    expect(await currentGeneration()).toBe(before + 1);
  });

  it('a proposal’s approval (the proposal itself moves nothing)', async () => {
    refuseLoneMoves();
    const before = await currentGeneration();
    const proposed = await submitRuleSet(ADMIN, 'risk-rules', edited('risk-rules', 'a proposal'), CALLER);
    if (proposed.applied) throw new Error('an admin’s write is a proposal');
    expect(await currentGeneration()).toBe(before);
    const base = await version('risk-rules');
    expect(await reviewConfigChange(SUPER, proposed.change_id, { action: 'approve', note: '' }, CALLER)).toMatchObject({
      status: 'approved',
      version: base + 1,
    });
    expect(await currentGeneration()).toBe(before + 1);
  });

  it('a general-settings save', async () => {
    refuseLoneMoves();
    const before = await currentGeneration();
    const { requests } = await requestsOf(proxy, () =>
      updateGeneralSettings(SUPER, { health_scoring_method: 'rules', alert_criticality_method: 'ai' }, CALLER),
    );
    expect(requests.filter(movesMarker)).toHaveLength(1);
    expect(await currentGeneration()).toBe(before + 1);
  });

  it('a write whose transaction fails moves nothing: only the write that landed does', async () => {
    const base = await version('health-rules');
    const before = await currentGeneration();
    const text = edited('health-rules', 'two writes on one version');
    // Both based on the same version; the other lands while this one's transaction is held.
    const held = whileHeld(
      proxy,
      (r) => r.operation === 'TransactWriteItems',
      () => submitRuleSet(SUPER, 'health-rules', text, CALLER, base),
    );
    await expect(submitRuleSet(SUPER, 'health-rules', text, CALLER, base)).rejects.toBeInstanceOf(Conflict);
    expect(await held.done()).toMatchObject({ applied: true, version: base + 1 });
    expect(await currentGeneration()).toBe(before + 1);
  });
});
