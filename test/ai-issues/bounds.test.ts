// AI grouping of a noisy cluster on DynamoDB Local and a local OpenAI-compatible server: the
// prompt shows the newest alerts only (older ones grouped by rules), and an AI issue links its
// newest 500 alerts while counting them all, so its item stays within DynamoDB's 400 KB.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROMPT_ALERTS_MAX, rulesGroups } from '../../shared/ai-issues/grouping.js';
import { AI_ALERT_KEYS_KEPT, alertKeyOf, regroupAiClusters } from '../../shared/ai-issues/regroup.js';
import { upsertClusters } from '../../shared/db/clusters.js';
import { listAiIssuesActiveSince } from '../../shared/db/ai-issues.js';
import { listClusterAlerts, type AlertRecord } from '../../shared/db/alerts.js';
import { ingestAlerts } from '../../shared/fleet/ingest.js';
import { demoClusters } from '../../infra/local/demo-fleet.js';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.js';
import { useTestTables } from '../support/dynamo.js';

const NOW = new Date();
const [quiet, noisy] = demoClusters(2, 7).map((c) => c.inventory);
let openai: FakeOpenAi;

beforeAll(async () => {
  await useTestTables();
  await upsertClusters([quiet!, noisy!]);
  openai = await startFakeOpenAi();
});
afterAll(async () => {
  for (const v of ['LLM_PROVIDER', 'LLM_MODEL', 'LLM_BASE_URL', 'LLM_MAX_ATTEMPTS']) delete process.env[v];
  await openai?.close();
});

/** `count` resolved disk alerts on a cluster, one a minute up to an hour ago (one rules group: each within the gap of the last). */
async function ingestBurst(clusterId: string, count: number, name = 'DiskUsageHigh') {
  const alerts = Array.from({ length: count }, (_, i) => {
    const start = new Date(NOW.getTime() - (count - i + 60) * 60_000);
    return {
      status: 'resolved',
      labels: { alertname: name, cluster_id: clusterId, severity: 'warning' },
      annotations: { summary: `disk ${i}` },
      startsAt: start.toISOString(),
      endsAt: new Date(start.getTime() + 30_000).toISOString(),
      fingerprint: `${'f'.repeat(120)}${String(i).padStart(8, '0')}`,
    };
  });
  for (let i = 0; i < alerts.length; i += 500) expect((await ingestAlerts(alerts.slice(i, i + 500), NOW)).rejected).toEqual([]);
}

const issuesOf = async (clusterId: string) =>
  (await listAiIssuesActiveSince(new Date(NOW.getTime() - 30 * 86_400_000))).filter((i) => i.cluster_id === clusterId);

describe('a noisy cluster', () => {
  it('an AI issue of 1,200 alerts links the newest 500 and counts 1,200', async () => {
    await ingestBurst(noisy!.cluster_id, 1_200);
    expect(await regroupAiClusters([noisy!.cluster_id], NOW)).toMatchObject({ regrouped: 1, failed: 0 });
    const [issue, ...more] = await issuesOf(noisy!.cluster_id);
    expect(more).toEqual([]);
    expect(issue!.alert_count).toBe(1_200);
    const alerts = (await listClusterAlerts(noisy!.cluster_id, new Date(NOW.getTime() - 7 * 86_400_000))).sort((a, b) => (a.starts_at < b.starts_at ? -1 : 1));
    expect(issue!.alert_keys).toEqual(alerts.slice(-AI_ALERT_KEYS_KEPT).map(alertKeyOf));
  });

  it('shows the model the newest 300 alerts; the older ones are grouped by rules, saying why', async () => {
    Object.assign(process.env, { LLM_PROVIDER: 'openai', LLM_MODEL: 'gpt-4o-mini', LLM_BASE_URL: openai.baseUrl, LLM_MAX_ATTEMPTS: '1' });
    await ingestBurst(quiet!.cluster_id, PROMPT_ALERTS_MAX + 40, 'DiskFull');
    openai.enqueueText(
      JSON.stringify({
        groups: [
          {
            alerts: Array.from({ length: PROMPT_ALERTS_MAX }, (_, i) => `a${i + 1}`),
            title: 'Disk filling',
            severity: 'Warning',
            reasoning: 'One disk.',
            summary: 'Filling.',
          },
        ],
      }),
    );
    expect(await regroupAiClusters([quiet!.cluster_id], NOW)).toMatchObject({ regrouped: 1, failed: 0 });
    const prompt = JSON.stringify(openai.answered().at(-1)!.body.messages);
    expect(prompt).toContain(`${PROMPT_ALERTS_MAX} alerts:`);
    expect(prompt.match(/\\"id\\":\\"a\d+\\"/g)).toHaveLength(PROMPT_ALERTS_MAX);
    const issues = await issuesOf(quiet!.cluster_id);
    expect(issues.map((i) => [i.issue_name, i.alert_count]).sort()).toEqual([
      ['Disk filling', PROMPT_ALERTS_MAX],
      ['Storage: DiskFull', 40],
    ]);
    expect(issues.find((i) => i.alert_count === 40)!.ai_reasoning).toMatch(/^More alerts than one prompt shows \(300, the newest\)/);
  });

  it('keeps a rules title and summary as long as a model may write them, whatever the names', () => {
    const alerts = Array.from(
      { length: 30 },
      (_, i) =>
        ({
          alert_name: `Disk${'x'.repeat(1_000)}${i}`,
          starts_at: new Date(NOW.getTime() - (30 - i) * 60_000).toISOString(),
          fingerprint: `fp${i}`,
          severity: 'warning',
          status: 'Firing',
          labels: {},
          detail: '',
          summary: '',
        }) as unknown as AlertRecord,
    );
    const [group] = rulesGroups(alerts);
    expect(group!.title.length).toBeLessThanOrEqual(200);
    expect(group!.summary.length).toBeLessThanOrEqual(2000);
    expect(group!.summary).toMatch(/still firing\.$/);
  });
});
