// The assistant's and the agent's cluster lookup (cluster_info, analyze_logs) on DynamoDB Local:
// cluster names are not unique (two customers may each have a `prod-1`), so a name that several
// clusters share is refused with their ids, never answered with one of them; an id always finds its own.
// A cluster's open issues: its Ongoing ones, newest first, as many as fit whole in the answer.
import { beforeAll, describe, expect, it } from 'vitest';
import { CLUSTER_INFO_OPEN_ISSUES, runTool, TOOL_OUTPUT_CHARS, ToolFailed, TOOLS } from '../../shared/chat/tools.js';
import { listClusterIssues } from '../../shared/db/issues.js';
import { ingestAlerts, ingestMetrics } from '../../shared/fleet/ingest.js';
import { METRIC_KEYS } from '../../shared/fleet/records.js';
import { dropFleetViewCache } from '../../shared/scoring/fleet-view.js';
import { alertNotice, storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';

const NAME = `twin-${Date.now().toString(36)}`;
let acme: string;
let globex: string;
let single: string;

beforeAll(async () => {
  await useTestTables();
  acme = await storedCluster({ cluster_name: NAME, customer_name: 'Acme Twins' });
  globex = await storedCluster({ cluster_name: NAME, customer_name: 'Globex Twins' });
  single = await storedCluster({ cluster_name: `${NAME}-solo`, customer_name: 'Acme Twins' });
  dropFleetViewCache();
}, 60_000);

const inventoryOf = async (cluster: string) => ((await TOOLS.cluster_info.run({ cluster })) as { inventory: { cluster_id: string } }).inventory.cluster_id;

describe('finding a cluster by name or id', () => {
  it('refuses a name two clusters share, naming each with its customer and id, in cluster_info and analyze_logs', async () => {
    for (const run of [
      () => TOOLS.cluster_info.run({ cluster: NAME }),
      () => TOOLS.analyze_logs.run({ cluster: NAME.toUpperCase(), hours: 24, level: 'any' }),
    ]) {
      const refused = await run().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(ToolFailed);
      const message = (refused as ToolFailed).message;
      expect(message).toContain(`is the name of 2 clusters`);
      expect(message).toContain(`(Acme Twins, id ${acme})`);
      expect(message).toContain(`(Globex Twins, id ${globex})`);
      expect(message).toMatch(/Give the id\.$/);
    }
  });

  it('finds each twin by its id, and a name only one cluster has by that name', async () => {
    expect(await inventoryOf(acme)).toBe(acme);
    expect(await inventoryOf(globex)).toBe(globex);
    expect(await inventoryOf(`${NAME}-SOLO`)).toBe(single);
    // A part of a name: one cluster's is found, several are refused with their ids.
    expect(await inventoryOf('-solo')).toBe(single);
    await expect(TOOLS.cluster_info.run({ cluster: NAME.slice(0, -2) })).rejects.toThrow(/matches 3 clusters: .*Give the id\./);
  });
});

describe("a cluster's open issues in cluster_info", () => {
  it('lists its Ongoing issues only, newest first, as many as fit whole in the answer, and says how many of how many', async () => {
    const now = new Date();
    const stormy = await storedCluster({ customer_name: 'Stormy' });
    // Every metric reported (the answer's scores grow with them), 52 firing alerts each an issue of its own,
    // seen from 52 to 1 minutes ago, and one resolved.
    await ingestMetrics(
      METRIC_KEYS.map((metric_key) => ({ cluster_id: stormy, metric_key, value: 50, at: new Date(now.getTime() - 60_000).toISOString() })),
      now,
    );
    const firing = Array.from({ length: 52 }, (_, i) => alertNotice(now, stormy, `Storm${i}`, `storm-${i}`, 60 - i, null));
    await ingestAlerts([...firing, alertNotice(now, stormy, 'Past', 'past-1', 120, 90)], now);
    dropFleetViewCache();
    const { content, is_error } = await runTool('cluster_info', { cluster: stormy });
    expect(is_error).toBe(false);
    expect(content.length).toBeLessThanOrEqual(TOOL_OUTPUT_CHARS);
    const info = JSON.parse(content) as { open_issues: { issue_name: string }[]; open_issues_note?: string; scored_at: string };
    expect(info.scored_at).toEqual(expect.any(String)); // whole, to its last key
    const shown = info.open_issues.length;
    expect(shown).toBeGreaterThan(10);
    expect(shown).toBeLessThanOrEqual(CLUSTER_INFO_OPEN_ISSUES);
    expect(info.open_issues_note).toBe(`the ${shown} most recently seen of at least ${CLUSTER_INFO_OPEN_ISSUES} open issues; run_sql lists them all`);
    const newestFirst = (await listClusterIssues(stormy))
      .filter((i) => i.status === 'Ongoing')
      .sort((a, b) => (a.last_seen < b.last_seen ? 1 : -1))
      .slice(0, shown)
      .map((i) => i.issue_name);
    expect(info.open_issues.map((i) => i.issue_name)).toEqual(newestFirst);
    expect(newestFirst).not.toContain('Past');
  });

  it('answers every open issue with no note when they all fit', async () => {
    const now = new Date();
    const calm = await storedCluster({ customer_name: 'Calm' });
    await ingestAlerts([alertNotice(now, calm, 'One', 'one-1', 10, null), alertNotice(now, calm, 'Two', 'two-1', 5, null)], now);
    dropFleetViewCache();
    const info = JSON.parse((await runTool('cluster_info', { cluster: calm })).content) as { open_issues: { issue_name: string }[]; open_issues_note?: string };
    expect(info.open_issues.map((i) => i.issue_name)).toEqual(['Two', 'One']);
    expect(info.open_issues_note).toBeUndefined();
  });
});
