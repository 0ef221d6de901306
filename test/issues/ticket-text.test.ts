// A ticket's text for an issue whose alerts have long descriptions, on DynamoDB Local: each alert is
// one line of at most TICKET_LINE_MAX characters, and the whole within what Jira Cloud accepts.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { listClusterIssues } from '../../shared/db/issues.js';
import { ingestAlerts } from '../../shared/fleet/ingest.js';
import { TICKET_DESCRIPTION_MAX, TICKET_LINE_MAX, ticketRequest } from '../../shared/issues/triage.js';
import { storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';

const NOW = new Date();
/** Jira Cloud's limit for a text field. */
const JIRA_TEXT_MAX = 32_767;

async function issueWith(descriptions: string[], alertname = 'DiskUsageHigh') {
  const c = await storedCluster();
  const alerts = descriptions.map((description, i) => ({
    status: 'firing',
    labels: { alertname, cluster_id: c },
    annotations: { description },
    startsAt: new Date(NOW.getTime() - (60 - i) * 60_000).toISOString(),
    fingerprint: `fp${i}`,
  }));
  expect((await ingestAlerts(alerts, NOW)).rejected).toEqual([]);
  const [issue] = await listClusterIssues(c);
  return issue!;
}

const alertLines = (description: string) => description.split('\n').filter((l) => l.startsWith('- '));

beforeAll(async () => {
  await useTestTables();
});

describe('a ticket for alerts with long descriptions', () => {
  it('cuts each alert line, marking the cut, and stays within Jira Cloud text limit', async () => {
    // Ten alerts of 20,000 characters each: 200,000 characters of description before.
    const issue = await issueWith(Array.from({ length: 10 }, () => randomBytes(10_000).toString('hex')));
    const { description } = await ticketRequest(issue, NOW);
    expect(description.length).toBeLessThanOrEqual(TICKET_DESCRIPTION_MAX);
    expect(TICKET_DESCRIPTION_MAX).toBeLessThanOrEqual(JIRA_TEXT_MAX);
    const lines = alertLines(description);
    expect(lines).toHaveLength(10);
    for (const line of lines) {
      expect(line.length).toBe(TICKET_LINE_MAX);
      expect(line.endsWith('…')).toBe(true);
    }
  });

  it('keeps each alert on one line, never splits a surrogate pair, and leaves a short one as it was', async () => {
    // Line breaks in a description would end Jira's bullet list; emoji are two UTF-16 units each.
    const issue = await issueWith(['first line\n\nsecond line', '😀'.repeat(TICKET_LINE_MAX), 'be-1 disk at 93%']);
    const lines = alertLines((await ticketRequest(issue, NOW)).description);
    expect(lines).toHaveLength(3);
    expect(lines.filter((l) => l.endsWith(': first line second line'))).toHaveLength(1);
    expect(lines.filter((l) => /^- .+ Firing DiskUsageHigh: be-1 disk at 93%$/.test(l))).toHaveLength(1);
    const emoji = lines.find((l) => l.includes('😀'))!;
    expect(emoji.length).toBeLessThanOrEqual(TICKET_LINE_MAX);
    expect(emoji.endsWith('😀…')).toBe(true);
    expect(() => encodeURIComponent(emoji)).not.toThrow(); // it throws on a lone surrogate
  });

  it("cuts a summary over Jira's 255 characters whole, never through an emoji in the alert name", async () => {
    const issue = await issueWith(['disk'], `Disk${'😀'.repeat(200)}`);
    const { summary } = await ticketRequest(issue, NOW);
    expect(summary.length).toBeLessThanOrEqual(255);
    expect(summary).toMatch(/^\[Warning\] Disk(😀)+…$/u);
    expect(() => encodeURIComponent(summary)).not.toThrow();
  });
});
