// A patrol report's lists on DynamoDB Local: a report always fits DynamoDB's 400 KB item,
// whether the rules engine flagged thousands of clusters or the LLM answered its longest.
import { beforeAll, describe, expect, it } from 'vitest';
import { createReport, finishReport, getReport } from '../../shared/db/patrol.js';
import { keptLists, type PatrolResult } from '../../shared/patrol/scan.js';
import { useTestTables } from '../support/dynamo.js';

beforeAll(async () => {
  await useTestTables();
});

/** A result of `flagged` clusters and `customers` customers whose texts are `long` characters (three UTF-8 bytes each). */
function result(flagged: number, customers: number, long: number): PatrolResult {
  return {
    fleet_summary: { total_clusters: flagged, critical: 0, warning: flagged, healthy: 0, headline: 'h' },
    clusters_flagged: Array.from({ length: flagged }, (_, i) => ({
      cluster_id: `c-${i}`.padEnd(64, 'x'),
      cluster_name: '名'.repeat(Math.min(long, 128)),
      customer_name: '客'.repeat(Math.min(long, 128)),
      severity: 'Warning' as const,
      reason: '因'.repeat(Math.min(long, 600)),
      recommended_action: '动'.repeat(Math.min(long, 600)),
    })),
    customer_summaries: Array.from({ length: customers }, (_, i) => ({
      customer_name: `${i}`,
      clusters: 1,
      flagged: 1,
      summary: '要'.repeat(Math.min(long, 800)),
    })),
    narrative: '述'.repeat(8000),
  };
}

async function stored(whole: PatrolResult) {
  const id = `size-${Math.random().toString(36).slice(2)}`;
  await createReport({ report_id: id, report_type: 'scheduled', triggered_by: 'test' });
  const kept = keptLists(whole);
  await finishReport(id, {
    status: 'completed',
    fleet_narrative: whole.narrative,
    flagged_count: whole.clusters_flagged.length,
    fleet_summary_parsed: whole.fleet_summary,
    clusters_flagged_parsed: kept.clusters_flagged,
    customer_summaries_parsed: kept.customer_summaries,
  });
  return (await getReport(id))!;
}

describe('a report keeps of its lists what its item holds', () => {
  it('keeps every entry of a report that fits', async () => {
    const whole = result(12, 5, 40);
    expect(keptLists(whole)).toEqual({ clusters_flagged: whole.clusters_flagged, customer_summaries: whole.customer_summaries });
    expect((await stored(whole)).clusters_flagged_parsed).toHaveLength(12);
  });

  it.each([
    ['the rules engine on a large fleet: 3,000 flagged, 800 customers', 3_000, 800, 60],
    ["the LLM's longest answer: 200 flagged and 500 customers at every text's maximum", 200, 500, 800],
  ])('stores %s: the first ones, in order, with the whole count', async (_, flagged, customers, long) => {
    const whole = result(flagged, customers, long);
    const report = await stored(whole);
    expect(report.status).toBe('completed');
    expect(report.flagged_count).toBe(flagged);
    expect(report.clusters_flagged_parsed.length).toBeGreaterThan(0);
    expect(report.clusters_flagged_parsed.length).toBeLessThanOrEqual(200);
    expect(report.clusters_flagged_parsed).toEqual(whole.clusters_flagged.slice(0, report.clusters_flagged_parsed.length));
    expect(report.customer_summaries_parsed).toEqual(whole.customer_summaries.slice(0, report.customer_summaries_parsed.length));
    const listBytes = Buffer.byteLength(JSON.stringify([...report.clusters_flagged_parsed, ...report.customer_summaries_parsed]));
    expect(listBytes).toBeLessThanOrEqual(320 * 1024);
  });

  it('without the cut, the same lists are refused by DynamoDB', async () => {
    const whole = result(3_000, 800, 60);
    const id = 'size-uncut';
    await createReport({ report_id: id, report_type: 'scheduled', triggered_by: 'test' });
    await expect(
      finishReport(id, { status: 'completed', clusters_flagged_parsed: whole.clusters_flagged, customer_summaries_parsed: whole.customer_summaries }),
    ).rejects.toThrow(/size/i);
  });
});
