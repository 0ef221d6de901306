// DynamoDB table definitions: the one source read by the CDK stack, the local
// runtime and the test setup. Every table has a string partition key `pk` and
// sort key `sk`; entity families keep their own table so each Lambda is granted
// only the tables it uses. Items that expire carry `ttl` (epoch seconds).
import { coreSettings } from '../config/core.js';

export interface IndexDefinition {
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey: string;
  /**
   * The attributes it copies besides the keys (the table's and its own), when not every one: a query of
   * it is billed by the size of what it copies, not of the item.
   */
  readonly include?: readonly string[];
}

export interface TableDefinition {
  /** Why the table exists, for readers of the stack. */
  readonly purpose: string;
  readonly ttl: boolean;
  readonly indexes: readonly IndexDefinition[];
}

const byTime = (name = 'gsi1'): IndexDefinition => ({ name, partitionKey: `${name}pk`, sortKey: `${name}sk` });

/**
 * What the fleet's views read of an alert (counts by start and status, groups by name): the start index
 * again, on its keys, with only these copied. An alert item carries its labels, annotations and texts (up to
 * 64 KB), and the views read every alert of 14 days on every refresh and every container's view; a read of
 * this index is billed by the few hundred bytes it copies (shared/db/alerts.ts listAlertFactsSince).
 */
export const ALERT_FACTS_INDEX = {
  name: 'gsi3',
  partitionKey: 'gsi1pk',
  sortKey: 'gsi1sk',
  include: ['cluster_id', 'alert_name', 'status', 'starts_at'],
} as const;

export const TABLES = {
  users: { purpose: 'accounts, invitation tokens, login throttling', ttl: true, indexes: [] },
  audit: { purpose: 'audit log, newest first in one partition; by action', ttl: true, indexes: [byTime()] },
  clusters: { purpose: 'cluster inventory', ttl: false, indexes: [] },
  metrics: { purpose: 'per-cluster per-day metric rollups', ttl: true, indexes: [] },
  alerts: {
    purpose: 'alerts by cluster; by when they started (gsi1, and gsi3 with their facts only), the ones still firing (gsi2)',
    ttl: true,
    indexes: [byTime(), byTime('gsi2'), ALERT_FACTS_INDEX],
  },
  logs: { purpose: 'cluster log events, kept 7 days', ttl: true, indexes: [] },
  scores: { purpose: 'score and risk snapshots, cache generation marker', ttl: true, indexes: [] },
  issues: { purpose: 'rule-grouped alert issues; by activity (gsi1), by cluster (gsi2)', ttl: false, indexes: [byTime(), byTime('gsi2')] },
  'ai-issues': { purpose: 'AI-grouped alert issues; by time window', ttl: false, indexes: [byTime()] },
  rules: { purpose: 'rule set versions, change proposals, general settings', ttl: false, indexes: [] },
  patrol: { purpose: 'patrol reports; by time window', ttl: true, indexes: [byTime()] },
  investigations: { purpose: 'agent investigations and agent tasks; by time and status', ttl: true, indexes: [byTime()] },
  'llm-usage': { purpose: 'LLM usage ledger by day, chat spend per user and day', ttl: true, indexes: [] },
  'embed-sessions': { purpose: 'server-side embed session reference tokens', ttl: true, indexes: [] },
  locks: { purpose: 'lease locks: one patrol scan, one metrics pull and one refresh per view at a time', ttl: true, indexes: [] },
  'metric-pulls': { purpose: 'metrics puller watermarks per metric, run status and errors', ttl: true, indexes: [] },
} as const satisfies Record<string, TableDefinition>;

export type TableName = keyof typeof TABLES;

/**
 * The lease locks of table `locks` (shared/db/locks.ts), by the partition key of their items (`LOCK#<name>`; a
 * trailing `*`: any text, as IAM's StringLike reads it). A function declaring `locks` names those it takes, renews, reads or releases (`leases`): access.ts
 * refuses it any other, and the stack grants only these keys (IAM's `dynamodb:LeadingKeys`), so a route group that
 * claims refreshes cannot hold or end the patrol's or the puller's lease.
 */
/** The partition key of lease lock `name`'s item (shared/db/locks.ts). */
export const lockPartitionKey = <N extends string>(name: N) => `LOCK#${name}` as const;

export const LEASES = {
  patrol: lockPartitionKey('patrol'),
  'metrics-puller': lockPartitionKey('metrics-puller'),
  /** One per set of view kinds (shared/scoring/refresh-claim.ts refreshLockName). */
  refresh: lockPartitionKey('refresh:*'),
} as const;
export type Lease = keyof typeof LEASES;

export const TABLE_NAMES = Object.keys(TABLES) as TableName[];

/**
 * History is kept this long, then DynamoDB's TTL removes it: the windows that read most (patrol reports,
 * investigations, the LLM usage ledger) go 365 days back; the audit log answers its newest 500 entries, an
 * issue's timeline the alerts it names (alerts: ALERT_RETENTION_DAYS, the same 400 after they were last heard); closed agent tasks are
 * kept for the record, read by no route.
 */
export const HISTORY_RETENTION_DAYS = 400;

/** The `ttl` (epoch seconds) of an item written at `from` and kept `days`. */
export const ttlAfterDays = (from: Date, days = HISTORY_RETENTION_DAYS): number => Math.floor(from.getTime() / 1000) + days * 86_400;

/** Physical table name: TABLE_PREFIX + logical name (e.g. `fleet-health-prod-users`). */
export function physicalTableName(table: TableName, prefix = coreSettings().tablePrefix): string {
  return `${prefix}${table}`;
}
