// Set-up of the issue list caches' tests (shared/issues/list-cache.ts): each test starts
// with an empty cache whose reads are kept at once, and the bounds a test changes are
// restored after it.
import { afterEach, beforeEach } from 'vitest';
import { issueCacheSettings } from '../../shared/issues/list-cache.js';

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
