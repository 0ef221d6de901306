// What an alert may carry into DynamoDB, on DynamoDB Local: map keys it would refuse are refused per
// alert (the others of the notification are stored and grouped), and only http(s) dashboard links
// reach the timeline.
import { beforeAll, describe, expect, it } from 'vitest';
import { listClusterAlerts } from '../../shared/db/alerts.js';
import { listClusterIssues } from '../../shared/db/issues.js';
import { ingestAlerts } from '../../shared/fleet/ingest.js';
import { issueDetail } from '../../shared/issues/queries.js';
import { storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';

const NOW = new Date();
const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000).toISOString();

const alert = (clusterId: string, name: string, over: Record<string, unknown> = {}) => ({
  status: 'firing',
  labels: { alertname: name, cluster_id: clusterId, severity: 'warning' },
  annotations: { summary: `${name} fired` },
  startsAt: minutesAgo(5),
  fingerprint: `fp-${name}`,
  ...over,
});

beforeAll(async () => {
  await useTestTables();
});

describe('alert map keys', () => {
  it('refuses an alert with an empty label or annotation key by index, and stores and groups the rest', async () => {
    const c = await storedCluster();
    const result = await ingestAlerts(
      [
        alert(c, 'EmptyLabelKey', { labels: { alertname: 'EmptyLabelKey', cluster_id: c, '': 'v' } }),
        alert(c, 'Good'),
        alert(c, 'EmptyAnnotationKey', { annotations: { summary: 's', '': 'x' } }),
        alert(c, 'LongKey', { annotations: { ['k'.repeat(257)]: 'x' } }),
      ],
      NOW,
    );
    expect(result).toEqual({
      accepted: 1,
      rejected: [
        { index: 0, reason: 'labels: a key must not be empty' },
        { index: 2, reason: 'annotations: a key must not be empty' },
        { index: 3, reason: `annotations.${'k'.repeat(63)}…: a key must be at most 256 characters` },
      ],
      duplicates: 0,
      issues: { created: 1, updated: 0 },
    });
    expect((await listClusterAlerts(c, new Date(0))).map((a) => a.alert_name)).toEqual(['Good']);
    expect((await listClusterIssues(c)).map((i) => i.alert_names)).toEqual([['Good']]);
  });

  it('refuses an alert name that shows nothing; takes any other, its direction overrides left out of the name shown', async () => {
    const c = await storedCluster();
    // Direction marks, soft hyphens and zero-width spaces come with real names (a right-to-left rule title, a name
    // pasted from a wiki): kept, or the alert and its resolution would be lost. An override (U+202E) reverses
    // every name and time written after it where names are joined (an AI issue's title): left out of the name.
    const names = [' ', '\u200B', '\u05D4\u05E9\u05E8\u05EA (DB)\u200F', 'Disk\u00ADFull', 'Evil\u202Enwod\u2066x\u2069'];
    const result = await ingestAlerts(
      names.map((name, i) => alert(c, `Odd${i}`, { labels: { alertname: name, cluster_id: c } })),
      NOW,
    );
    expect(result.rejected).toEqual([0, 1].map((index) => ({ index, reason: 'labels.alertname: blank' })));
    const stored = await listClusterAlerts(c, new Date(0));
    expect(stored.map((a) => a.alert_name).sort()).toEqual(['\u05D4\u05E9\u05E8\u05EA (DB)\u200F', 'Disk\u00ADFull', 'Evilnwodx'].sort());
    expect(stored.find((a) => a.alert_name === 'Evilnwodx')?.labels.alertname).toBe('Evil\u202Enwod\u2066x\u2069');
  });

  it('refuses an endsAt that is no time, as a startsAt is refused (it ended at its receipt, hours after the sender’s end)', async () => {
    const c = await storedCluster();
    const ends = ['x'.repeat(65), '2026-11-20T10:59:60Z', 'yesterday', '2026-11-20 10:00'];
    const result = await ingestAlerts(
      ends.map((endsAt, i) => alert(c, `BadEnd${i}`, { status: 'resolved', endsAt })),
      NOW,
    );
    expect(result.rejected).toEqual(ends.map((_, index) => ({ index, reason: expect.stringMatching(/^endsAt: /) })));
    expect((await listClusterAlerts(c, new Date(0))).filter((a) => a.alert_name.startsWith('BadEnd'))).toEqual([]);
    // A firing alert's endsAt is never read: one that is no time is kept (Alertmanager would not send it again).
    const firing = await ingestAlerts([alert(c, 'FiringBadEnd', { status: 'firing', endsAt: '' })], NOW);
    expect(firing).toMatchObject({ accepted: 1, rejected: [] });
  });
});

describe('alert dashboard links', () => {
  it('keeps an absolute http(s) link and stores any other as "", keeping the alert', async () => {
    const c = await storedCluster();
    const links: [string, Record<string, unknown>, string][] = [
      ['Https', { annotations: { dashboard_url: 'https://grafana.example.com/d/disk' } }, 'https://grafana.example.com/d/disk'],
      ['Generator', { generatorURL: 'http://prometheus:9090/graph?g0.expr=up' }, 'http://prometheus:9090/graph?g0.expr=up'],
      ['Script', { annotations: { dashboard_url: 'javascript:alert(document.cookie)' } }, ''],
      ['SpacedScript', { annotations: { dashboard_url: ' JavaScript:alert(1)' } }, ''],
      ['Data', { annotations: { dashboard_url: 'data:text/html,<script>alert(1)</script>' } }, ''],
      ['GeneratorScript', { generatorURL: 'javascript:alert(1)' }, ''],
      ['Relative', { annotations: { dashboard_url: '/d/disk' } }, ''],
      ['TooLong', { annotations: { dashboard_url: `https://grafana.example.com/${'a'.repeat(2048)}` } }, ''],
      // Prometheus writes the rule's expression, URL-encoded, into generatorURL: a long rule's link is long.
      ['LongGenerator', { generatorURL: `http://prometheus:9090/graph?g0.expr=${'sum%28rate%28x%5B5m%5D%29%29'.repeat(100)}` }, ''],
    ];
    const result = await ingestAlerts(
      links.map(([name, over]) => alert(c, name, over)),
      NOW,
    );
    expect(result).toMatchObject({ accepted: links.length, rejected: [] });
    const stored = new Map((await listClusterAlerts(c, new Date(0))).map((a) => [a.alert_name, a.dashboard_url]));
    expect(Object.fromEntries(stored)).toEqual(Object.fromEntries(links.map(([name, , url]) => [name, url])));
    // and what the issue's timeline shows: every alert, each with its link
    const shown = [];
    for (const issue of await listClusterIssues(c)) shown.push(...(await issueDetail(issue.issue_id, NOW)).body.alerts);
    expect(shown).toHaveLength(links.length);
    for (const a of shown) expect(a.dashboard_url).toBe(stored.get(a.alert_name));
  });
});
