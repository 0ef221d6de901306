import { beforeAll, describe, expect, it } from 'vitest';
import { putItem } from '../../shared/db/client.js';
import { getTask } from '../../shared/db/investigations.js';
import { listReportFiguresSince } from '../../shared/db/patrol.js';
import { getIssue, listIssueSummariesSince } from '../../shared/db/issues.js';
import { itemReader, listOf, MalformedItem, mapOf, nullable, number, oneOf, optional, orElse, record, string } from '../../shared/db/items.js';
import { useTestTables } from '../support/dynamo.js';

beforeAll(async () => {
  await useTestTables();
});

interface Thing {
  name: string;
  kind: 'a' | 'b';
  count: number;
  note: string;
  closed_at: string | null;
  retry_at?: string | null;
  tags: string[];
  labels: Record<string, string>;
  owner: { id: string; since: number };
}

const readThing = itemReader<Thing>({
  name: string,
  kind: oneOf(['a', 'b']),
  count: orElse(number, 0),
  note: orElse(string, ''),
  closed_at: nullable(string),
  retry_at: optional(nullable(string)),
  tags: listOf(string),
  labels: mapOf(string),
  owner: record<Thing['owner']>({ id: string, since: number }),
});

const stored = {
  pk: 'THING#1',
  sk: 'THING',
  gsi1pk: 'THINGS',
  ttl: 1,
  name: 'one',
  kind: 'b',
  count: 3,
  note: 'n',
  closed_at: null,
  tags: ['x'],
  labels: { env: 'prod' },
  owner: { id: 'u1', since: 5, extra: true },
};

describe('item readers', () => {
  it('copy the declared fields only, leaving keys and undeclared attributes behind', () => {
    expect(readThing(stored)).toEqual({
      name: 'one',
      kind: 'b',
      count: 3,
      note: 'n',
      closed_at: null,
      retry_at: undefined,
      tags: ['x'],
      labels: { env: 'prod' },
      owner: { id: 'u1', since: 5 },
    });
  });

  it('fill what an older item lacks: null for a nullable field, the fallback, undefined for an optional one', () => {
    const { count: _c, note: _n, closed_at: _a, ...older } = stored;
    const thing = readThing(older);
    expect([thing.count, thing.note, thing.closed_at, 'retry_at' in thing, thing.retry_at]).toEqual([0, '', null, true, undefined]);
    expect(readThing({ ...stored, note: null, retry_at: null })).toMatchObject({ note: '', retry_at: null });
  });

  it('refuse an item that does not fit, naming its key, the field and what is there', () => {
    const fails = (item: Record<string, unknown>) => () => readThing(item);
    expect(fails({ ...stored, kind: 'c' })).toThrow(new MalformedItem('stored item THING#1 / THING: kind should be one of a, b, is "c"'));
    expect(fails({ ...stored, name: undefined })).toThrow('name should be a string, is undefined');
    expect(fails({ ...stored, count: '3' })).toThrow('count should be a number, is "3"');
    expect(fails({ ...stored, tags: 'x' })).toThrow('tags should be a list, is "x"');
    expect(fails({ ...stored, labels: { env: 1 } })).toThrow('labels.env should be a string, is number');
    expect(fails({ ...stored, owner: { id: 'u1', since: null } })).toThrow('owner.since should be a number, is null');
    expect(fails({ ...stored, owner: [] })).toThrow('owner should be a map, is a list');
  });
});

describe('repositories read items older code wrote', () => {
  it('an issue written before the claim, supersede and triage version fields reads with their empty values', async () => {
    const now = new Date();
    const seen = new Date(now.getTime() - 3_600_000).toISOString();
    // As the first issue writer stored it: no ticket_claim, superseded_by, triage_version, and no triage fields yet.
    await putItem('issues', {
      pk: 'ISSUE#old-1',
      sk: 'ISSUE',
      gsi1pk: 'ISSUES',
      gsi1sk: `~ONGOING#${seen}#old-1`,
      issue_id: 'old-1',
      group_key: 'cluster=c1|alert_name=DiskFull',
      issue_name: 'DiskFull',
      severity: 'Critical',
      status: 'Ongoing',
      cluster_id: 'c1',
      alert_count: 2,
      alert_names: ['DiskFull'],
      first_seen: seen,
      last_seen: seen,
      resolved_at: null,
      cluster_name: 'prod-1',
      customer_name: 'Acme',
      updated_at: '',
      updated_by: '',
      grouped_at: seen,
      grouping_version: 1,
    });
    const issue = await getIssue('old-1');
    expect(issue).toMatchObject({ triage_status: '', assignee: '', notes: '', ticket_key: '', ticket_url: '', triage_version: 0 });
    expect([issue!.superseded_by, issue!.ticket_claim, issue!.ticket_claimed_at]).toEqual([null, null, null]);
    expect(issue).not.toHaveProperty('pk');
    const [summary] = await listIssueSummariesSince(new Date(now.getTime() - 86_400_000));
    expect(summary).toEqual({
      issue_id: 'old-1',
      issue_name: 'DiskFull',
      severity: 'Critical',
      status: 'Ongoing',
      cluster_id: 'c1',
      cluster_name: 'prod-1',
      customer_name: 'Acme',
      first_seen: seen,
      last_seen: seen,
      resolved_at: null,
      triage_status: '',
      disposition_status: '',
      assignee: '',
      superseded_by: null,
      alert_count: 2,
    });
  });

  it('an agent task from before retries were spaced out has no not_before; a damaged item is refused by name', async () => {
    const task = {
      task_id: 'old-task',
      cluster_id: 'c1',
      cluster_name: 'prod-1',
      customer_name: 'Acme',
      customer_tier: 'A',
      trigger_reason: 'Critical',
      priority: 500,
      status: 'pending',
      created_at: '2026-01-01T00:00:00.000Z',
      attempts: 0,
      last_error: null,
      owner: null,
      claimed_at: null,
      finished_at: null,
      investigation_id: null,
    };
    await putItem('investigations', { pk: 'TASK#old-task', sk: 'TASK', gsi1pk: 'TASKS#OPEN', gsi1sk: 'x', ...task });
    expect(await getTask('old-task')).toEqual({ ...task, not_before: undefined });
    await putItem('investigations', { pk: 'TASK#bad-task', sk: 'TASK', ...task, task_id: 'bad-task', status: 'paused' });
    await expect(getTask('bad-task')).rejects.toThrow(
      new MalformedItem('stored item TASK#bad-task / TASK: status should be one of pending, running, done, failed, is "paused"'),
    );
  });

  it('an item read through a projection that does not fit is named by its key', async () => {
    const at = '2026-01-02T00:00:00.000Z';
    await putItem('patrol', { pk: 'REPORT#odd', sk: 'REPORT', gsi1pk: 'REPORTS', gsi1sk: `${at}#odd`, report_id: 'odd', created_at: at, status: 'paused' });
    await expect(listReportFiguresSince(new Date(at))).rejects.toThrow(
      new MalformedItem('stored item REPORT#odd / REPORT: status should be one of running, completed, failed, is "paused"'),
    );
  });
});
