// GET /api/metrics, what Prometheus scrapes every 15-60 s, through the local server on a
// fleet with a month of history: 1,000 clusters, 30 days of the LLM usage ledger (2,000 calls
// a day: an investigation or a chat message per cluster every half day) and 120 patrol reports
// (one every 6 hours, 60 flagged clusters each). Each scrape reads the fleet view (cached), the
// issues window (cached), the patrol and investigation figures and the LLM ledger's totals:
// the ledger's closed days are read once per container, the reports as figures only.
import { upsertClusters } from '../../shared/db/clusters.js';
import { batchPut } from '../../shared/db/client.js';
import { usageItem, usageRecord } from '../../shared/db/llm-usage.js';
import { putRollups } from '../../shared/db/metrics.js';
import { createReport, finishReport } from '../../shared/db/patrol.js';
import { startBenchService } from './service.js';
import { syntheticFleet } from './synthetic-fleet.js';
import type { BenchContext } from './run.js';
import { SCHEDULE_TRIGGER } from '../../shared/patrol/schedule.js';

export const title = 'The Prometheus scrape (GET /api/metrics) over a month of history: first and next';

const DAYS = 30;
const CALLS_A_DAY = 2_000;
const REPORTS = 120;
const DAY_MS = 86_400_000;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function run({ report }: BenchContext): Promise<void> {
  const now = new Date();
  const fleet = syntheticFleet(1_000, now);
  await upsertClusters(fleet.data.map((d) => d.cluster));
  await putRollups(fleet.rollups);
  const calls = Array.from({ length: DAYS * CALLS_A_DAY }, (_, i) =>
    usageItem(
      usageRecord(
        {
          run_id: `run-${Math.floor(i / 4)}`,
          source: i % 3 ? 'agent' : 'chat',
          model: i % 2 ? 'gpt-4o-mini' : 'anthropic.claude-3-5-haiku-20241022-v1:0',
          input_tokens: 2_000 + (i % 500),
          output_tokens: 300 + (i % 100),
          total_tokens: 2_300 + (i % 500) + (i % 100),
          cost_usd: 0.0005,
          duration_ms: 900 + (i % 400),
          error: i % 97 === 0,
          user: i % 3 ? 'agent-worker' : 'oncall',
        },
        new Date(now.getTime() - (i / CALLS_A_DAY) * DAY_MS),
      ),
    ),
  );
  await batchPut('llm-usage', calls);
  for (let n = 0; n < REPORTS; n++) {
    const id = `bench-report-${n}`;
    await createReport({ report_id: id, report_type: 'scheduled', triggered_by: SCHEDULE_TRIGGER }, new Date(now.getTime() - n * 6 * 3_600_000 - 60_000));
    const flagged = fleet.data.slice(0, 60).map(({ cluster }, c) => ({
      cluster_id: cluster.cluster_id,
      cluster_name: cluster.cluster_name,
      customer_name: cluster.customer_name,
      severity: c % 3 ? ('Warning' as const) : ('Critical' as const),
      reason: `Disk at ${80 + (c % 20)}% and rising; compaction backlog over the last three days. `.repeat(3),
      recommended_action: 'Expand the volume, then check the compaction throughput against the runbook. '.repeat(3),
    }));
    await finishReport(id, {
      status: 'completed',
      model: 'gpt-4o-mini',
      total_tokens: 40_000,
      cost_usd: 0.02,
      duration_seconds: 45,
      flagged_count: 60,
      clusters_flagged_parsed: flagged,
    });
  }
  const history = `1,000 clusters, ${DAYS} days of the LLM ledger (${(DAYS * CALLS_A_DAY).toLocaleString('en-US')} calls), ${REPORTS} patrol reports`;

  const { service, token } = await startBenchService();
  let text = '';
  const scrape = async () => {
    const start = process.hrtime.bigint();
    const res = await fetch(`${service.url}/api/metrics`, { headers: { Authorization: `Bearer ${token}` } });
    text = await res.text();
    if (res.status !== 200 || !text.includes('fleet_health_llm_')) throw new Error(`scrape answered ${res.status}: ${text.slice(0, 200)}`);
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  try {
    const first = await scrape();
    const next: number[] = [];
    for (let i = 0; i < 21; i++) next.push(await scrape());
    report(
      'GET /api/metrics',
      `${history}: the first scrape of a container (views computed, the month read) / each next one (21)`,
      `${first.toFixed(0)} ms / p50 ${median(next).toFixed(0)} ms`,
    );
    // What a cluster adds to the answer (its info, scores, classes, alerts, staleness and sample time): the text a
    // larger fleet's scrape grows by, against Lambda's 6 MB answer (gzip is what keeps it under).
    const perCluster =
      text
        .split('\n')
        .filter((line) => line.includes('cluster_id="'))
        .reduce((sum, line) => sum + line.length + 1, 0) / fleet.data.length;
    report(
      'GET /api/metrics',
      'the answer uncompressed: all of it / per cluster / at 10,000 clusters (the per-cluster part × 10,000)',
      `${(Buffer.byteLength(text) / 1_000).toFixed(0)} KB / ${perCluster.toFixed(0)} bytes / ${((perCluster * 10_000) / 1e6).toFixed(1)} MB`,
    );
  } finally {
    await service.stop();
  }
}
