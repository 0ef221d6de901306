// The freshness line of a watch page (api/live.ts): when what it shows was read ("Updated 2 minutes
// ago"), ticking while nothing new arrives, so a wall screen whose reads stopped says so. A refetch
// that fails keeps the rows shown and says here that they are old, and why, instead of replacing them.
import { LIVE_MS, type LiveRead } from '../api/live';
import { relative, useNow, utcSeconds } from './time';
import './updated.css';

export function Updated({ reads }: { reads: LiveRead[] }) {
  const now = useNow(15_000);
  const held = reads.filter((r) => r.data !== undefined && r.dataUpdatedAt > 0);
  if (held.length === 0) return null;
  // The oldest of the page's reads: the page is as current as its least current part.
  const at = new Date(Math.min(...held.map((r) => r.dataUpdatedAt))).toISOString();
  const failed = held.find((r) => r.isError);
  const old = Math.max(now, Date.now()) - Date.parse(at) > 3 * LIVE_MS;
  return (
    <p className={`live-stamp${failed || old ? ' live-old' : ''}`}>
      <span className="muted">
        Updated{' '}
        <time dateTime={at} title={utcSeconds(at)}>
          {relative(at, now)}
        </time>
        {reads.some((r) => r.isFetching) ? ' · updating…' : ' · updates every minute while shown'}
      </span>
      <span role="status">{failed ? ` Could not update: ${failed.error?.message ?? 'no answer'}. What is shown is from ${utcSeconds(at)}.` : ''}</span>
    </p>
  );
}
