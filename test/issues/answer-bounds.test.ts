// What an issue's answers weigh, through the real handlers on DynamoDB Local: a detail, its evidence
// and an AI issue's detail stay well under the 6 MB a Lambda function may answer whatever the stored
// alerts carry (200 alerts of 40 KB of random text each, text that is all escapes), newest first with how
// many there are in all; and a dashboard link stored before ingest checked links reaches no answer
// unless it is http(s).
import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as aiIssues } from '../../functions/ai-issues.js';
import { handler as issues } from '../../functions/issues.js';
import { regroupAiClusters } from '../../shared/ai-issues/regroup.js';
import { listAiIssuesActiveSince } from '../../shared/db/ai-issues.js';
import { listClusterAlerts, upsertAlert } from '../../shared/db/alerts.js';
import { listClusterIssues } from '../../shared/db/issues.js';
import { ingestAlerts } from '../../shared/fleet/ingest.js';
import { LAMBDA_PAYLOAD_BYTES } from '../../shared/http/lambda-payload.js';
import { ALERT_TEXT_SHOWN, ALERTS_ANSWER_BYTES, ALERTS_SHOWN } from '../../shared/issues/queries.js';
import { regroupClusters } from '../../shared/issues/regroup.js';
import { storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';
import { apiEvent, lambdaContext, type Handler } from '../support/events.js';
import { userToken, useTestJwtSecret } from '../support/tokens.js';

const NOW = new Date();
const DAY_MS = 86_400_000;
let viewer: string;

beforeAll(async () => {
  await useTestTables();
  useTestJwtSecret();
  viewer = await userToken('viewer', 'bounds-viewer');
});

/** `count` resolved DiskUsageHigh alerts a minute apart up to a few minutes ago (one rule issue, one AI issue), each described by `description(i)`. */
async function ingestBurst(clusterId: string, count: number, description: (i: number) => string) {
  const alerts = Array.from({ length: count }, (_, i) => {
    const start = new Date(NOW.getTime() - (count - i + 5) * 60_000);
    return {
      status: 'resolved',
      labels: { alertname: 'DiskUsageHigh', cluster_id: clusterId, severity: 'warning' },
      annotations: { summary: `disk ${i}`, description: description(i) },
      startsAt: start.toISOString(),
      endsAt: new Date(start.getTime() + 30_000).toISOString(),
      fingerprint: `fp${String(i).padStart(6, '0')}`,
    };
  });
  expect((await ingestAlerts(alerts, NOW)).rejected).toEqual([]);
  expect(await regroupAiClusters([clusterId], NOW)).toMatchObject({ regrouped: 1, failed: 0 });
}

const ruleIssueOf = async (clusterId: string) => (await listClusterIssues(clusterId))[0]!;
const aiIssueOf = async (clusterId: string) => (await listAiIssuesActiveSince(new Date(NOW.getTime() - 30 * DAY_MS))).find((i) => i.cluster_id === clusterId)!;

/** The three answers that list an issue's alerts, each with the route and handler that answers it. */
async function answersOf(clusterId: string) {
  const rule = (await ruleIssueOf(clusterId)).issue_id;
  const ai = (await aiIssueOf(clusterId)).issue_id;
  return [
    { name: 'detail', handler: issues, route: '/api/issues/{issue_id}', id: rule },
    { name: 'evidence', handler: issues, route: '/api/issues/{issue_id}/evidence', id: rule },
    { name: 'AI detail', handler: aiIssues, route: '/api/ai-issues/{issue_id}', id: ai },
  ];
}

/** A GET through the group handler: its status, the result's weight as Lambda counts it (the whole result as JSON), its body parsed. */
async function answer(a: { handler: unknown; route: string; id: string }, gzip: boolean) {
  const result = await (a.handler as Handler)(
    apiEvent({
      method: 'GET',
      path: a.route.replace('{issue_id}', a.id),
      routeKey: `GET ${a.route}`,
      params: { issue_id: a.id },
      headers: { authorization: `Bearer ${viewer}`, ...(gzip ? { 'accept-encoding': 'gzip' } : {}) },
    }),
    lambdaContext,
  );
  const text = result.isBase64Encoded ? gunzipSync(Buffer.from(result.body!, 'base64')).toString() : result.body!;
  return { status: result.statusCode, weight: Buffer.byteLength(JSON.stringify(result)), body: JSON.parse(text) };
}

/** What an answer weighs beside its alerts, here: the issue, metrics, inventory, headers. */
const REST_BYTES = 64 * 1024;

describe('an issue of 200 alerts carrying 40 KB of text each', () => {
  let cluster: string;
  let descriptions: Map<string, string>;

  beforeAll(async () => {
    cluster = await storedCluster();
    // Random base64: gzip makes 200 of them (8 MB) no smaller than 6 MB once in base64.
    await ingestBurst(cluster, 200, () => randomBytes(30_000).toString('base64'));
    descriptions = new Map((await listClusterAlerts(cluster, new Date(0))).map((a) => [a.starts_at, a.detail]));
  }, 120_000);

  it('answers its detail, evidence and AI detail gzipped, well under 6 MB: every alert, newest first, its text cut', async () => {
    const newest = [...descriptions.keys()].sort().reverse();
    for (const a of await answersOf(cluster)) {
      const { status, weight, body } = await answer(a, true);
      expect(status, a.name).toBe(200);
      expect(weight).toBeLessThan(ALERTS_ANSWER_BYTES + REST_BYTES);
      expect(body).toMatchObject({ alerts_total: 200, alerts_truncated: false });
      expect(body.alerts.map((e: { starts_at: string }) => e.starts_at)).toEqual(newest);
      for (const e of body.alerts) {
        expect(e.detail).toHaveLength(ALERT_TEXT_SHOWN);
        expect(e.detail).toBe(`${descriptions.get(e.starts_at)!.slice(0, ALERT_TEXT_SHOWN - 1)}…`);
      }
    }
    expect(ALERTS_ANSWER_BYTES + REST_BYTES).toBeLessThan(LAMBDA_PAYLOAD_BYTES / 2); // what "well under" means
  }, 120_000);
});

describe('an issue whose alerts text is all escapes', () => {
  it('lists the newest alerts that fit, says the list is cut, and answers uncompressed under 6 MB', async () => {
    const cluster = await storedCluster();
    // A control character weighs 7 bytes in Lambda's result (escaped twice): 5,000 of them, 200 times, were 7 MB.
    await ingestBurst(cluster, 200, () => '\u0001'.repeat(5_000));
    const newest = (await listClusterAlerts(cluster, new Date(0))).map((a) => a.starts_at).reverse();
    for (const a of await answersOf(cluster)) {
      const { status, weight, body } = await answer(a, false);
      expect(status, a.name).toBe(200);
      expect(weight).toBeLessThan(ALERTS_ANSWER_BYTES + REST_BYTES);
      expect(body).toMatchObject({ alerts_total: 200, alerts_truncated: true });
      expect(body.alerts.length).toBeGreaterThan(50);
      expect(body.alerts.map((e: { starts_at: string }) => e.starts_at)).toEqual(newest.slice(0, body.alerts.length));
    }
  }, 120_000);
});

describe('an issue of more alerts than an answer lists', () => {
  it('lists the newest 200 and counts them all, its AI detail too (it links 260)', async () => {
    const cluster = await storedCluster();
    await ingestBurst(cluster, 260, (i) => `filling ${i}`);
    expect((await aiIssueOf(cluster)).alert_keys).toHaveLength(260);
    const newest = (await listClusterAlerts(cluster, new Date(0))).map((a) => a.starts_at).reverse();
    for (const a of await answersOf(cluster)) {
      const { status, body } = await answer(a, true);
      expect(status, a.name).toBe(200);
      expect(body, a.name).toMatchObject({ alerts_total: 260, alerts_truncated: true });
      expect(body.alerts.map((e: { starts_at: string }) => e.starts_at)).toEqual(newest.slice(0, ALERTS_SHOWN));
    }
  }, 60_000);
});

describe('dashboard links stored before ingest checked them', () => {
  it('reach no answer unless http(s); the alerts are still listed', async () => {
    const cluster = await storedCluster();
    const links = [
      'https://grafana.example.com/d/disk',
      'javascript:alert(document.cookie)',
      ' JavaScript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      '/d/disk',
    ];
    const shown = new Map<string, string>();
    for (const [i, url] of links.entries()) {
      const startsAt = new Date(NOW.getTime() - (10 - i) * 60_000).toISOString();
      shown.set(startsAt, url.startsWith('https:') ? url : '');
      // As stored before ingest kept only http(s) links: written as it was then, not through ingest.
      await upsertAlert(
        {
          alert_id: `old-${i}`,
          cluster_id: cluster,
          alert_name: 'DiskUsageHigh',
          severity: 'Warning',
          status: 'Firing',
          starts_at: startsAt,
          ends_at: null,
          fingerprint: `old${String(i).padStart(13, '0')}`,
          labels: { alertname: 'DiskUsageHigh', cluster_id: cluster },
          annotations: { dashboard_url: url },
          summary: 'disk filling',
          detail: '',
          dashboard_url: url,
        },
        NOW,
      );
    }
    expect(await regroupClusters([cluster], NOW)).toMatchObject({ created: 1, failed: 0 });
    expect(await regroupAiClusters([cluster], NOW)).toMatchObject({ regrouped: 1, failed: 0 });
    for (const a of await answersOf(cluster)) {
      const { status, body } = await answer(a, true);
      expect(status, a.name).toBe(200);
      expect(Object.fromEntries(body.alerts.map((e: { starts_at: string; dashboard_url: string }) => [e.starts_at, e.dashboard_url])), a.name).toEqual(
        Object.fromEntries(shown),
      );
    }
  });
});
