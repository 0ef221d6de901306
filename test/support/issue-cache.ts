// Set-up of the issue list caches' tests (shared/issues/list-cache.ts): each test starts
// with an empty cache whose reads are kept at once (the bounds a test changes are restored
// after it), and the requests a cache sends are counted on the wire, by kind.
import { afterEach, beforeEach } from 'vitest';
import { issueCacheSettings } from '../../shared/issues/list-cache.js';
import { tableOf, type DynamoProxy } from './dynamo-proxy.js';

/** The requests DynamoDB received, by kind: of the cache's table (its marker, its window, its records), and any other. */
export interface CacheReads {
  marker: number;
  window: number;
  records: number;
  other: number;
}

/** Counts the requests DynamoDB receives from now on, by kind (through the proxy: nothing of ours is mocked). */
export function countCacheReads(proxy: DynamoProxy, table: 'issues' | 'ai-issues'): { counts: CacheReads; reset(): void } {
  const counts: CacheReads = { marker: 0, window: 0, records: 0, other: 0 };
  // Physical names end with the logical one; `issues` must not match `ai-issues`.
  const ours = (name: string) => name.endsWith(table) && (table === 'ai-issues' || !name.endsWith('ai-issues'));
  proxy.observe((request) => {
    const { operation, input } = request;
    if (!ours(tableOf(request))) counts.other++;
    else if (operation === 'GetItem' && input.Key?.pk?.S === 'CACHE') counts.marker++;
    else if (operation === 'Query' && input.IndexName === 'gsi1') counts.window++;
    else if (operation === 'BatchGetItem') counts.records++;
    else counts.other++;
  });
  return { counts, reset: () => Object.assign(counts, { marker: 0, window: 0, records: 0, other: 0 }) };
}

/** The cache's own reads of `counts` (other requests left out). */
export const cacheReads = (counts: CacheReads) => ({ marker: counts.marker, window: counts.window, records: counts.records });

/** Before each test: `drop` the cache and call `reset` (the request counts); after it, the default bounds again. */
export function useFreshIssueCache(drop: () => void, reset: () => void): void {
  const defaults = { ...issueCacheSettings };
  beforeEach(() => {
    // Most tests read right after writing: DynamoDB Local's indexes follow at once.
    issueCacheSettings.settleMs = 0;
    drop();
    reset();
  });
  afterEach(() => {
    Object.assign(issueCacheSettings, defaults);
  });
}
