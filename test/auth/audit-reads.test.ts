// What a page of the audit log reads (GET /api/settings/audit): the keys of the newest entries it
// counts and orders, and only the page's entries whole. A triage's entry carries its notes before and
// after (10,000 characters each), and a page of 25 read 500 entries whole.
import { beforeAll, describe, expect, it } from 'vitest';
import { auditPage } from '../../shared/auth/user-admin.js';
import { AUDIT_READ_LIMIT, listAudit, writeAudit } from '../../shared/db/audit.js';
import { batchPut } from '../../shared/db/client.js';
import { requestsOf, tableOf, type DynamoProxy } from '../support/dynamo-proxy.js';
import { attributesAsked, useWatchedTables } from '../support/read-costs.js';

let proxy: DynamoProxy;
const NOTE = 'note '.repeat(2_000);
const start = Date.now() - 3_600_000;

beforeAll(async () => {
  ({ proxy } = await useWatchedTables());
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

  it('answers 0 pages when nothing matches, as the issue lists do', async () => {
    expect(await auditPage({ action: 'login', before: new Date(start - 60_000).toISOString(), page: 1, page_size: 5 })).toMatchObject({
      entries: [],
      total: 0,
      total_pages: 0,
    });
  });
});

/** An instant written with the offset `+05:30`, as a user in India might type it. */
const inKolkata = (ms: number) => new Date(ms + 5.5 * 3_600_000).toISOString().replace('Z', '+05:30');

describe('the log before an instant (`before`)', () => {
  it('lists only the entries stamped before it, whatever offset it is written with', async () => {
    const before = inKolkata(start + 10_500);
    const every = await auditPage({ action: '', before, page: 1, page_size: 25 });
    expect(every.entries.map((e) => e.actor)).toEqual(Array.from({ length: 11 }, (_, i) => `user${10 - i}`));
    expect(every).toMatchObject({ total: 11, older_before: null });
    const logins = await auditPage({ action: 'login', before, page: 1, page_size: 25 });
    expect(logins.entries.map((e) => e.actor)).toEqual(['user9', 'user6', 'user3', 'user0']);
  });

  it('lists an entry stamped in the millisecond of a `before` given past the millisecond: it was stamped before it', async () => {
    // user5's entry is stamped at start + 5 s exactly, before every one of these instants (offset and nanoseconds too).
    const at = new Date(start + 5_000).toISOString();
    for (const before of [at.replace('Z', '1Z'), at.replace('Z', '000001Z'), inKolkata(start + 5_000).replace('+', '0001+')]) {
      const listed = await auditPage({ action: '', before, page: 1, page_size: 25 });
      expect(listed.entries.map((e) => e.actor)[0], before).toBe('user5');
    }
    // The last instant there is, past its millisecond: every entry was stamped before it.
    expect((await auditPage({ action: '', before: '9999-12-31T23:59:59.9999Z', page: 1, page_size: 25 })).total).toBe(30);
    // At the millisecond itself, or a fraction of it that is zeros, the bound excludes it, as before.
    for (const before of [at, at.replace('Z', '000000Z')])
      expect((await auditPage({ action: '', before, page: 1, page_size: 25 })).entries[0]?.actor, before).toBe('user4');
  });

  it('says where the next older listing starts when one is full, and so reaches every entry', async () => {
    // 600 entries, two to a second from the second entry on, an hour after the others: the listing's
    // 500th and 501st share their millisecond.
    const base = start + 3_600_000;
    const entries = Array.from({ length: 600 }, (_, i) => {
      const at = new Date(base + Math.floor((i + 1) / 2) * 1000).toISOString();
      const sk = `${at}#id-${String(i).padStart(4, '0')}`;
      return {
        pk: 'AUDIT',
        sk,
        gsi1pk: 'ACTION#patrol_trigger',
        gsi1sk: sk,
        id: `id-${i}`,
        at,
        actor: 'patrol',
        role: null,
        action: 'patrol_trigger',
        target: null,
        detail: {},
        ip: null,
        user_agent: null,
      };
    });
    await batchPut('audit', entries);
    const ids = async (before: string) => {
      const seen: string[] = [];
      const first = await auditPage({ action: 'patrol_trigger', before, page: 1, page_size: 100 });
      for (let page = 1; page <= first.total_pages; page++)
        seen.push(...(await auditPage({ action: 'patrol_trigger', before, page, page_size: 100 })).entries.map((e) => e.id));
      return { seen, older: first.older_before, total: first.total };
    };
    const newest = await ids('');
    expect(newest.total).toBe(AUDIT_READ_LIMIT);
    // The oldest listed is entry 100, at base + 50 s; the next listing starts a millisecond after it.
    expect(newest.seen.at(-1)).toBe('id-100');
    expect(newest.older).toBe(new Date(base + 50_001).toISOString());
    const older = await ids(newest.older!);
    expect(older).toMatchObject({ total: 101, older: null });
    // Entry 100 shares its millisecond with entry 99, past the first listing: listed again, not skipped.
    expect(older.seen.slice(0, 2).sort()).toEqual(['id-100', 'id-99']);
    expect(new Set([...newest.seen, ...older.seen]).size).toBe(600);

    // Where the next entry is older than the last listed, the next listing starts at the last one's instant: nothing twice.
    const shifted = await ids(new Date(base + 299_500).toISOString());
    expect(shifted.seen.slice(0, 2).sort()).toEqual(['id-597', 'id-598']);
    expect(shifted.seen.at(-1)).toBe('id-99');
    expect(shifted.older).toBe(new Date(base + 50_000).toISOString());
    const rest = await ids(shifted.older!);
    expect(rest).toMatchObject({ total: 99, older: null });
    expect(new Set([...shifted.seen, ...rest.seen]).size).toBe(shifted.seen.length + rest.seen.length);
  });
});
