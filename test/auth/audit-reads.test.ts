// What a page of the audit log reads (GET /api/settings/audit): the keys of the newest entries it
// counts and orders, and only the page's entries whole. A triage's entry carries its notes before and
// after (10,000 characters each), and a page of 25 read 500 entries whole.
import { beforeAll, describe, expect, it } from 'vitest';
import { auditPage } from '../../shared/auth/user-admin.js';
import { listAudit, writeAudit } from '../../shared/db/audit.js';
import { requestsOf, tableOf, type DynamoProxy } from '../support/dynamo-proxy.js';
import { attributesAsked, useWatchedTables } from '../support/read-costs.js';

let proxy: DynamoProxy;
const NOTE = 'note '.repeat(2_000);

beforeAll(async () => {
  ({ proxy } = await useWatchedTables());
  const start = Date.now() - 3_600_000;
  for (let i = 0; i < 30; i++) {
    const action = i % 3 ? 'issue_update' : 'login';
    await writeAudit({ actor: `user${i}`, role: 'admin', action, target: `t${i}`, detail: { before: NOTE, after: NOTE } }, new Date(start + i * 1000));
  }
});

describe('a page of the audit log', () => {
  it.each([
    ['every action', '', 30],
    ['one action', 'issue_update', 20],
  ])("%s: reads the entries' keys to count and order them, and the page's entries whole", async (_, action, total) => {
    const { result, requests } = await requestsOf(
      proxy,
      () => auditPage({ action, page: 2, page_size: 5 }),
      (r) => tableOf(r).endsWith('audit'),
    );
    const all = await listAudit(action || undefined);
    expect(result).toMatchObject({ total, page: 2, page_size: 5, total_pages: Math.ceil(total / 5) });
    expect(result.entries).toEqual(all.slice(5, 10));
    const queries = requests.filter((r) => r.operation === 'Query');
    expect(queries.length).toBeGreaterThan(0);
    for (const q of queries) expect(attributesAsked(q)).toEqual(['pk', 'sk']);
    const gets = requests.filter((r) => r.operation === 'BatchGetItem');
    expect(gets.flatMap((r) => Object.values(r.input.RequestItems as Record<string, { Keys: unknown[] }>).flatMap((t) => t.Keys))).toHaveLength(5);
  });

  it('answers an empty page past the last, with the total', async () => {
    expect(await auditPage({ action: 'login', page: 3, page_size: 5 })).toMatchObject({ entries: [], total: 10, total_pages: 2 });
  });
});
