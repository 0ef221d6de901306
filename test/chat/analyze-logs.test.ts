// The assistant's analyze_logs tool on DynamoDB Local: a level asked for is filtered as the log
// is read, so a flood of other levels newer than them cannot crowd its events out of the newest
// 5,000 the tool reads (it answered "no errors" on a cluster whose errors were two hours old).
import { beforeAll, describe, expect, it } from 'vitest';
import { TOOLS } from '../../shared/chat/tools.js';
import { putLogs } from '../../shared/db/logs.js';
import { dropFleetViewCache } from '../../shared/scoring/fleet-view.js';
import { storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';

const NOW = Date.now();
let clusterName: string;

beforeAll(async () => {
  await useTestTables();
  clusterName = `logs-${NOW.toString(36)}`;
  const cluster_id = await storedCluster({ cluster_name: clusterName });
  dropFleetViewCache();
  const at = (msAgo: number) => new Date(NOW - msAgo).toISOString();
  // 6,000 info lines in the last hour, 20 errors two hours ago.
  const info = Array.from({ length: 6000 }, (_, i) => ({
    cluster_id,
    at: at(i * 500 + 1000),
    level: 'info' as const,
    message: `heartbeat ${i}`,
    source: 'fe',
  }));
  const errors = Array.from({ length: 20 }, (_, i) => ({
    cluster_id,
    at: at(2 * 3_600_000 + i * 1000),
    level: 'error' as const,
    message: `disk write failed on be-${i % 3}`,
    source: 'be',
  }));
  await putLogs([...info, ...errors]);
}, 120_000);

describe('analyze_logs with a level', () => {
  it('finds that level’s events behind a flood of newer events of another level', async () => {
    const answer = await TOOLS.analyze_logs.run({ cluster: clusterName, hours: 24, level: 'error' });
    expect(answer).toMatchObject({ events: 20, truncated: false });
  });

  it('any level reads the newest 5,000 and says it was cut', async () => {
    const answer = await TOOLS.analyze_logs.run({ cluster: clusterName, hours: 24, level: 'any' });
    expect(answer).toMatchObject({ events: 5000, truncated: expect.stringMatching(/only the newest 5000 events were read/) });
  });
});
