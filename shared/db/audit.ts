// Audit log repository. Entries sit in one partition ordered by time (newest
// first is one Query) and in an index by action. Details are scrubbed of
// anything that looks like a credential before they are stored.
import { randomUUID } from 'node:crypto';
import { ROLES, type Role } from '../auth/roles.js';
import type { AuditEntry } from '../routes/settings.js';
import { AUDIT_ACTIONS, type AuditAction } from './audit-actions.js';
import { batchGet, projection, putItem, queryAll, tableName, type Item, type TransactItem } from './client.js';
import { ttlAfterDays } from './tables.js';
import { anyMap, itemReader, nullable, oneOf, string } from './items.js';

export { AUDIT_ACTIONS, type AuditAction } from './audit-actions.js';

/** The newest entries a listing reads at most. */
export const AUDIT_READ_LIMIT = 500;
const AUDIT_PK = 'AUDIT';

/** An entry as GET /api/settings/audit answers it: the route's schema is its one definition. */
export type { AuditEntry };

export interface AuditInput {
  actor: string;
  role: Role | null;
  action: AuditAction;
  target?: string | null;
  detail?: Record<string, unknown>;
  ip?: string | null;
  user_agent?: string | null;
}

const SECRET_KEY = /pass|token|secret|hash|authorization|credential|api[_-]?key/i;

/** Drops every key that could carry a credential, at any depth. */
export function scrubDetail(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(scrubDetail);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !SECRET_KEY.test(k))
        .map(([k, v]) => [k, scrubDetail(v)]),
    );
  }
  return value;
}

/** The entry and its item, for a write of its own or as part of a transaction. */
function auditRecord(input: AuditInput, now: Date): { entry: AuditEntry; item: Item } {
  const entry: AuditEntry = {
    id: randomUUID(),
    at: now.toISOString(),
    actor: input.actor,
    role: input.role,
    action: input.action,
    target: input.target ?? null,
    detail: scrubDetail(input.detail ?? {}) as Record<string, unknown>,
    ip: input.ip ?? null,
    user_agent: input.user_agent?.slice(0, 512) ?? null,
  };
  const sk = `${entry.at}#${entry.id}`;
  const item = {
    pk: AUDIT_PK,
    sk,
    gsi1pk: `ACTION#${entry.action}`,
    gsi1sk: sk,
    ttl: ttlAfterDays(now),
    ...entry,
  };
  return { entry, item };
}

export async function writeAudit(input: AuditInput, now = new Date()): Promise<AuditEntry> {
  const { entry, item } = auditRecord(input, now);
  await putItem('audit', item as Item & { pk: string; sk: string });
  return entry;
}

/**
 * The instant to stamp a change of a record (and its audit entry) with, read after the record was: now, or a
 * millisecond after the record's last change (`previous`) when the clock has not passed it. A change that
 * commits over another was read after that one committed, so its entry sorts after it, also within one
 * millisecond (entries of one instant would sort by their random ids).
 */
export function instantAfter(previous: string | null | undefined): Date {
  const last = previous ? Date.parse(previous) : Number.NaN;
  return new Date(Number.isFinite(last) ? Math.max(Date.now(), last + 1) : Date.now());
}

/** The audit entry as a transaction action: recorded if, and only if, the change it describes is. */
export function auditAction(input: AuditInput, now = new Date()): TransactItem {
  return { Put: { TableName: tableName('audit'), Item: auditRecord(input, now).item } };
}

const readEntry = itemReader<AuditEntry>({
  id: string,
  at: string,
  actor: string,
  role: nullable(oneOf(ROLES)),
  action: oneOf(AUDIT_ACTIONS),
  target: nullable(string),
  detail: anyMap,
  ip: nullable(string),
  user_agent: nullable(string),
});

/**
 * The Query of the newest entries, of one action (its index) or of all, and only those stamped before
 * `before` when given (an instant as `toISOString` writes it: the keys start with one, so the order of
 * the strings is the order of the instants).
 */
const newest = (action?: string, before?: string) => {
  const [pk, sk] = action ? ['gsi1pk', 'gsi1sk'] : ['pk', 'sk'];
  return {
    ...(action ? { IndexName: 'gsi1' } : {}),
    KeyConditionExpression: before ? `${pk} = :pk AND ${sk} < :before` : `${pk} = :pk`,
    ExpressionAttributeValues: { ':pk': action ? `ACTION#${action}` : AUDIT_PK, ...(before ? { ':before': before } : {}) },
    ScanIndexForward: false,
    Limit: 100,
  };
};

/**
 * `before` as the keys' form (`toISOString`, to the millisecond) of the same exclusive bound: an instant given past
 * the millisecond (`…:00.0005Z`, nanoseconds) is rounded up, not down as Date.parse does, since an entry stamped at
 * `…:00.000Z` was stamped before it (rounded down, it was left out of the listing and of every older one).
 */
export function auditBound(before: string): string | undefined {
  const ms = Date.parse(before) + (/^[^.]*\.\d{3}\d*[1-9]/.test(before) ? 1 : 0);
  // Rounded up past 9999-12-31T23:59:59.999Z: toISOString writes `+010000-…`, which sorts before every key (`+` < `2`);
  // every entry was stamped before it, so it bounds nothing.
  return ms > Date.parse('9999-12-31T23:59:59.999Z') ? undefined : new Date(ms).toISOString();
}

/** The instant an entry's key starts with (`<at>#<id>`). */
const instantOfKey = (sk: string) => sk.slice(0, sk.indexOf('#'));

/** The newest entries first, optionally of one action, at most AUDIT_READ_LIMIT, whole. */
export async function listAudit(action?: string): Promise<AuditEntry[]> {
  return (await queryAll('audit', newest(action), AUDIT_READ_LIMIT)).map(readEntry);
}

/**
 * One page of the newest AUDIT_READ_LIMIT entries (of one action, stamped before `before`), and how many
 * those are: their keys are read to count and order them, and only the page's entries whole. An entry's
 * detail runs to two notes of 10,000 characters (a triage), and a page of 25 read 500 entries whole.
 * `olderBefore`, when there are more: the `before` that lists the entries after its oldest one. That is
 * the oldest one's instant, or a millisecond after it when the next entry shares it (listed again, then,
 * with that entry, rather than skipped): one more key is read to tell.
 */
export async function auditEntriesPage(
  action: string | undefined,
  page: number,
  pageSize: number,
  before?: string,
): Promise<{ entries: AuditEntry[]; total: number; olderBefore: string | null }> {
  const read = await queryAll('audit', { ...newest(action, before), ...projection([]) }, AUDIT_READ_LIMIT + 1);
  const keys = read.slice(0, AUDIT_READ_LIMIT);
  const wanted = keys.slice((page - 1) * pageSize, page * pageSize).map((k) => ({ pk: String(k.pk), sk: String(k.sk) }));
  const found = new Map((await batchGet('audit', wanted)).map((item) => [String(item.sk), item]));
  // In the keys' order; an entry gone meanwhile (its TTL) is left out.
  const entries = wanted.flatMap(({ sk }) => {
    const item = found.get(sk);
    return item ? [readEntry(item)] : [];
  });
  return { entries, total: keys.length, olderBefore: read.length > AUDIT_READ_LIMIT ? olderListing(String(keys.at(-1)?.sk), String(read.at(-1)?.sk)) : null };
}

/** The `before` of the listing after the entry keyed `oldest`, whose next older entry is keyed `next`. */
function olderListing(oldest: string, next: string): string {
  const at = instantOfKey(oldest);
  return instantOfKey(next) === at ? new Date(Date.parse(at) + 1).toISOString() : at;
}
