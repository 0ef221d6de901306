// Rollup merges against DynamoDB Local through the fault-injecting proxy: a put whose answer
// is lost, while other writers merge into the same cluster-day before its retry, is merged
// once (shared/db/metrics.ts, updateDay's write ids).
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { getItem, putItem } from '../../shared/db/client.js';
import { addSamples, mergePulledRollups, readClusterRollups, rollupPartition, shardOf, ttlOf } from '../../shared/db/metrics.js';
import type { MetricSample } from '../../shared/fleet/records.js';
import { encodeCell } from '../../shared/fleet/rollup-columns.js';
import { useTestTables } from '../support/dynamo.js';
import type { DynamoProxy } from '../support/dynamo-proxy.js';

let proxy: DynamoProxy;
beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
});

/** Today, so no pack counter is bumped: the only puts are the merges'. */
const today = () => new Date().toISOString().slice(0, 10);
const sample = (clusterId: string, value: number): MetricSample => ({
  cluster_id: clusterId,
  metric_key: 'disk_used_pct',
  value,
  at: new Date().toISOString(),
});

/**
 * Runs `first` with its first put's answer lost (DynamoDB applies it) and the client's retry of
 * that put held until `meanwhile` has run: other writers land on the item in between.
 */
async function lostPutThenOthers<T>(first: () => Promise<T>, meanwhile: () => Promise<unknown>): Promise<{ result: T; puts: number }> {
  let puts = 0;
  let others: Promise<unknown> | undefined;
  const stop = proxy.watch(({ operation, input }) => {
    if (operation !== 'PutItem' || !String(input.TableName).endsWith('metrics')) return undefined;
    puts++;
    if (puts === 1) return 'lose-answer';
    if (puts === 2) return { hold: (others = meanwhile()) };
    return undefined;
  });
  try {
    const result = await first();
    await others;
    return { result, puts };
  } finally {
    stop();
  }
}

const keyOf = (clusterId: string, day: string) => ({ pk: rollupPartition(day, shardOf(clusterId)), sk: `CLUSTER#${clusterId}` });

describe('a merge whose put answer was lost', () => {
  it('counts its samples once when another writer merged into the day before its retry', async () => {
    const cluster = randomUUID();
    const { puts } = await lostPutThenOthers(
      () => addSamples([sample(cluster, 10)]),
      () => addSamples([sample(cluster, 20)]),
    );
    expect(puts).toBe(3); // the lost put, its refused retry, the other writer's put: no second merge
    const [stored] = await readClusterRollups(cluster, [today()]);
    expect(stored!.metrics.disk_used_pct).toMatchObject({ count: 2, sum: 30, min: 10, max: 20 });
  });

  it('counts them once with 7 other merges in between (the item keeps the last 8 write ids, no more)', async () => {
    const cluster = randomUUID();
    await lostPutThenOthers(
      () => addSamples([sample(cluster, 1)]),
      async () => {
        for (let i = 2; i <= 8; i++) await addSamples([sample(cluster, i)]);
      },
    );
    const [stored] = await readClusterRollups(cluster, [today()]);
    expect(stored!.metrics.disk_used_pct).toMatchObject({ count: 8, sum: 36, min: 1, max: 8 });
    const item = await getItem('metrics', keyOf(cluster, today()), true);
    expect(item).toMatchObject({ version: 8 });
    expect((item!.ws as Uint8Array).length).toBe(8 * 8); // bounded: 8 ids of 8 bytes, the item stays within one write unit
  });

  it('counts them once on an item an earlier version stored (a single write id `w`), which it rewrites in the new form', async () => {
    const cluster = randomUUID();
    const day = today();
    const old = { disk_used_pct: { min: 5, max: 5, sum: 5, count: 1, last: 5, last_at: new Date().toISOString() } };
    await putItem('metrics', { ...keyOf(cluster, day), cluster_id: cluster, day, m: encodeCell(old), version: 3, w: randomUUID(), ttl: ttlOf(day) });
    await lostPutThenOthers(
      () => addSamples([sample(cluster, 10)]),
      () => addSamples([sample(cluster, 20)]),
    );
    const [stored] = await readClusterRollups(cluster, [day]);
    expect(stored!.metrics.disk_used_pct).toMatchObject({ count: 3, sum: 35, min: 5, max: 20 });
    const item = await getItem('metrics', keyOf(cluster, day), true);
    expect(item).toMatchObject({ version: 5 });
    expect(item!.w).toBeUndefined();
    expect((item!.ws as Uint8Array).length).toBe(2 * 8);
  });

  it('counts them stored when it is the last attempt whose answer was lost (7 conflicts before it)', async () => {
    const cluster = randomUUID();
    let puts = 0;
    const stop = proxy.watch(({ operation, input }) => {
      if (operation !== 'PutItem' || !String(input.TableName).endsWith('metrics')) return undefined;
      puts++;
      // Seven puts refused as if another writer won each time; the eighth lands, its answer lost; its retry is refused.
      if (puts <= 7) return { type: 'ConditionalCheckFailedException', message: 'The conditional request failed' };
      return puts === 8 ? 'lose-answer' : undefined;
    });
    try {
      expect(await addSamples([sample(cluster, 42)])).toEqual([]);
    } finally {
      stop();
    }
    expect(puts).toBe(9);
    const [stored] = await readClusterRollups(cluster, [today()]);
    expect(stored!.metrics.disk_used_pct).toMatchObject({ count: 1, sum: 42 });
  });

  it('a pulled window counts as written, not skipped, when another writer merged before its retry', async () => {
    const cluster = randomUUID();
    const day = today();
    const at = new Date().toISOString();
    const part = { min: 3, max: 3, sum: 3, count: 1, last: 3, last_at: at };
    const { result } = await lostPutThenOthers(
      () => mergePulledRollups([{ cluster_id: cluster, day, metrics: { qps: part }, windows: { qps: { from: at, to: at } } }]),
      () => addSamples([sample(cluster, 20)]),
    );
    expect(result).toEqual({ written: 1, skipped: 0 });
    const [stored] = await readClusterRollups(cluster, [day]);
    expect(stored!.metrics).toMatchObject({ qps: { count: 1, sum: 3 }, disk_used_pct: { count: 1, sum: 20 } });
  });
});

describe('a merge DynamoDB keeps throttling', () => {
  it('answers its cluster-day’s samples as not stored, stores the other days, and a resend stores them once', async () => {
    const [throttled, fine] = [randomUUID(), randomUUID()];
    let refused = 0;
    const stop = proxy.watch(({ operation, input }) => {
      if (operation !== 'PutItem' || !JSON.stringify(input.Item ?? {}).includes(throttled)) return undefined;
      refused++;
      return { type: 'ProvisionedThroughputExceededException', message: 'The level of configured provisioned throughput for the table was exceeded.' };
    });
    const batch = [sample(throttled, 10), sample(fine, 20), sample(throttled, 30)];
    let unstored: MetricSample[];
    try {
      unstored = await addSamples(batch);
    } finally {
      stop();
    }
    expect(refused).toBeGreaterThanOrEqual(4); // the client's own attempts, with its throttling backoff
    expect(unstored).toEqual([batch[0], batch[2]]);
    expect((await readClusterRollups(fine, [today()]))[0]!.metrics.disk_used_pct).toMatchObject({ count: 1, sum: 20 });
    expect(await readClusterRollups(throttled, [today()])).toEqual([]);

    expect(await addSamples(unstored)).toEqual([]);
    expect((await readClusterRollups(throttled, [today()]))[0]!.metrics.disk_used_pct).toMatchObject({ count: 2, sum: 40 });
  }, 30_000);

  it('counts them stored when the put landed with its answer lost and the client’s retries were then throttled', async () => {
    const cluster = randomUUID();
    let puts = 0;
    const stop = proxy.watch(({ operation, input }) => {
      if (operation !== 'PutItem' || !JSON.stringify(input.Item ?? {}).includes(cluster)) return undefined;
      puts++;
      return puts === 1
        ? 'lose-answer'
        : { type: 'ProvisionedThroughputExceededException', message: 'The level of configured provisioned throughput for the table was exceeded.' };
    });
    try {
      expect(await addSamples([sample(cluster, 42)])).toEqual([]); // not sent again: it is stored
    } finally {
      stop();
    }
    expect(puts).toBeGreaterThanOrEqual(2);
    expect((await readClusterRollups(cluster, [today()]))[0]!.metrics.disk_used_pct).toMatchObject({ count: 1, sum: 42 });
  }, 30_000);
});
