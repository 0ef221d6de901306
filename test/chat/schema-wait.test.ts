// A chat message waits for the SQL snapshot's schema only so long (toolSpecs' `schemaBy`): a snapshot
// still being read (a month-long alert storm is 100 MB of pages) must not eat the message's budget
// before the model is first called. Here the snapshot's reads are held at the proxy until the tools
// have been asked for; the read then completes, and the next message's run_sql carries the schema.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropFleetDatabase, toolSpecs } from '../../shared/chat/tools.js';
import { upsertClusters } from '../../shared/db/clusters.js';
import { useTestTables } from '../support/dynamo.js';
import type { DynamoProxy } from '../support/dynamo-proxy.js';
import { clusterRecord } from '../scoring/fixtures.js';

let proxy: DynamoProxy;

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  await upsertClusters([clusterRecord('schema-wait-1'), clusterRecord('schema-wait-2')]);
});
afterAll(async () => {
  await dropFleetDatabase();
  await proxy.close();
});

const sqlDescription = (specs: Awaited<ReturnType<typeof toolSpecs>>) => specs.find((s) => s.name === 'run_sql')!.description;

describe("the chat's tools while the SQL snapshot is still being read", () => {
  it('are given without the schema once the wait is over, and with it once the read is done', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held = 0;
    const stop = proxy.watch(() => {
      held += 1;
      return { hold: released };
    });
    try {
      const specs = await toolSpecs(Date.now() + 50);
      expect(held).toBeGreaterThan(0); // the snapshot's read had started, and was held
      expect(sqlDescription(specs)).toContain('The SQL snapshot is unavailable right now; use the other tools.');
      // The other tools are all there: the message goes on without run_sql's schema only.
      expect(specs.map((s) => s.name).sort()).toEqual(['analyze_logs', 'cluster_info', 'run_sql', 'search_knowledge']);
    } finally {
      release();
      stop();
    }
    // The read went on: the next message (no wait this time) has the schema of the same snapshot.
    const next = sqlDescription(await toolSpecs());
    expect(next).not.toContain('unavailable');
    expect(next).toMatch(/clusters/);
    expect(next).toMatch(/metric_daily/);
  });
});
