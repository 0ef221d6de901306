// A refresh route's worker event that Lambda delivers late (it sat in the async queue past the
// run's lease) or twice (at-least-once): a run's outcome is final. The follow route's 503 for a
// run whose lease ended never turns into a 200, and a late event computes nothing, least of all
// beside the next run that claimed the refresh meanwhile. Through the real route and worker
// handlers on DynamoDB Local; Lambda's queue is played by a local worker that holds each event
// until the test delivers it, and the lease passes on a clock moved forward (Date only).
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { handler as fleet } from '../../functions/fleet.js';
import { handler as recompute } from '../../functions/recompute.js';
import { lockHolder } from '../../shared/db/locks.js';
import { createRefresh, currentGeneration, getRefresh } from '../../shared/db/scores.js';
import { claimRefresh, REFRESH_LEASE_MS, refreshLockName, releaseRefresh } from '../../shared/scoring/refresh-claim.js';
import { localWorkersSettled, registerLocalWorker } from '../../shared/worker-invoke.js';
import { storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';
import type { DynamoProxy } from '../support/dynamo-proxy.js';
import { call, type Handler } from '../support/events.js';
import { userToken, useTestJwtSecret } from '../support/tokens.js';

const KINDS = ['fleet', 'health', 'risk'] as const;
type RefreshEvent = { refresh_id: string; kinds: (typeof KINDS)[number][] };

/** Lambda's async queue: the events the routes sent, not yet delivered. */
const queued: RefreshEvent[] = [];
let admin: string;
let proxy: DynamoProxy;

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  useTestJwtSecret();
  admin = await userToken('admin', 'late-admin');
  await storedCluster();
  await storedCluster();
  process.env.REFRESH_WAIT_SECONDS = '0'; // the POST answers 202 at once: the event is still queued
  registerLocalWorker('recompute', async (event) => void queued.push(event as RefreshEvent));
});

afterAll(() => {
  delete process.env.REFRESH_WAIT_SECONDS;
});

afterEach(async () => {
  vi.useRealTimers();
  queued.length = 0;
  // The next test's refresh starts a run of its own, whatever claim this one left.
  const holder = await lockHolder(refreshLockName(KINDS));
  if (holder) await releaseRefresh(holder.owner, KINDS);
});

const refresh = () =>
  call(fleet as Handler, { method: 'POST', path: '/api/fleet/refresh', routeKey: 'POST /api/fleet/refresh', headers: { authorization: `Bearer ${admin}` } });
const follow = (id: string) =>
  call(fleet as Handler, {
    method: 'GET',
    path: `/api/fleet/refresh/${id}`,
    routeKey: 'GET /api/fleet/refresh/{refresh_id}',
    params: { refresh_id: id },
    headers: { authorization: `Bearer ${admin}` },
  });

/** A 202's run id, with the event its POST queued. */
async function started(): Promise<{ id: string; event: RefreshEvent }> {
  const res = await refresh();
  expect(res.statusCode, res.body).toBe(202);
  const id = String(res.json!.refresh_id);
  await localWorkersSettled(); // the route's invoke has reached the queue
  const event = queued.find((e) => e.refresh_id === id);
  expect(event).toBeDefined();
  return { id, event: event! };
}

/** Moves Date (only) past the lease of a run started now. */
const afterTheLease = () => vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + REFRESH_LEASE_MS + 1_000 });

describe('a refresh event delivered after its run’s lease', () => {
  it('is not run: the follow route’s 503 stays, and the next run keeps the claim alone', async () => {
    const late = await started();
    afterTheLease();

    // The lease has passed and no worker has started the run: it failed, and says so.
    const expired = await follow(late.id);
    expect(expired.statusCode, expired.body).toBe(503);
    // The claim lapsed with it: the next refresh starts a run of its own.
    const next = await started();
    expect(next.id).not.toBe(late.id);

    // Now Lambda delivers the late event: it must compute nothing (no second refresh beside `next`).
    const generation = await currentGeneration();
    await recompute(late.event);
    const again = await follow(late.id);
    expect(again.statusCode, again.body).toBe(503);
    expect(await currentGeneration()).toBe(generation);
    expect((await getRefresh(late.id))?.status).toBe('failed');
    expect((await lockHolder(refreshLockName(KINDS)))?.owner).toBe(next.id);

    // The next run's own event, delivered in time, runs it.
    await recompute(next.event);
    expect(await currentGeneration()).toBe(generation + 1);
    expect((await follow(next.id)).statusCode).toBe(200);
  });

  it('is not run when delivered before anyone asked after the run: the run is recorded failed', async () => {
    const late = await started();
    afterTheLease();
    const generation = await currentGeneration();
    await recompute(late.event);
    expect(await currentGeneration()).toBe(generation);
    expect((await getRefresh(late.id))?.status).toBe('failed');
    expect((await follow(late.id)).statusCode).toBe(503);
  });
});

describe('a refresh event delivered in time', () => {
  it('runs its run once: a second delivery of the event computes nothing and changes no answer', async () => {
    const run = await started();
    const generation = await currentGeneration();
    await recompute(run.event);
    expect(await currentGeneration()).toBe(generation + 1);
    const done = await follow(run.id);
    expect(done.statusCode).toBe(200);
    await recompute(run.event);
    expect(await currentGeneration()).toBe(generation + 1);
    expect(await follow(run.id)).toMatchObject({ statusCode: 200, body: done.body });
  });

  it('is not run when another run took the claim over meanwhile: that run keeps it, this one is recorded failed', async () => {
    // A run recorded but not yet started while another request holds the claim (a race in the claim's take-over).
    expect(await claimRefresh('run-overtaken', KINDS)).toBeUndefined();
    await createRefresh('run-overtaken', KINDS);
    await releaseRefresh('run-overtaken', KINDS);
    expect(await claimRefresh('run-holder', KINDS)).toBeUndefined();
    const generation = await currentGeneration();
    await recompute({ refresh_id: 'run-overtaken', kinds: [...KINDS] });
    expect(await currentGeneration()).toBe(generation);
    expect((await getRefresh('run-overtaken'))?.status).toBe('failed');
    expect((await lockHolder(refreshLockName(KINDS)))?.owner).toBe('run-holder');
  });

  it('runs its run when the answer to the worker’s start was lost and the write retried', async () => {
    const run = await started();
    let lost = 0;
    // The worker's first write of the run record (its start) is applied, but its answer never arrives.
    const stop = proxy.watch((request) => {
      if (request.operation !== 'UpdateItem' || !String(request.input.TableName).endsWith('scores') || lost > 0) return undefined;
      lost++;
      return 'lose-answer';
    });
    try {
      await recompute(run.event);
    } finally {
      stop();
    }
    expect(lost).toBe(1);
    expect((await getRefresh(run.id))?.status).toBe('done');
    expect((await follow(run.id)).statusCode).toBe(200);
  });
});
