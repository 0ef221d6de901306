// The "stale" badge (issue 20 §4): a cluster whose metrics stopped arriving is
// scored on old data, and says so wherever its score is shown (the fleet and
// health tables and the cluster page). The word is the signal (not a colour); the time of the
// last sample is its tooltip and, for screen readers, part of its text.
import { utc } from './time';
import './stale-badge.css';

/** What the badge says about the newest sample: its time, or that the lookback has none. */
export function staleText(lastMetricAt: string | null): string {
  return lastMetricAt ? `no metrics since ${utc(lastMetricAt)}` : 'no metrics in the scoring lookback';
}

/**
 * Renders nothing for a cluster whose metrics are fresh. `brief`: the text
 * beside it already says when (the hidden detail would be read twice).
 */
export function StaleBadge({ stale, lastMetricAt, brief = false }: { stale: boolean; lastMetricAt: string | null; brief?: boolean }) {
  if (!stale) return null;
  const text = staleText(lastMetricAt);
  return (
    <span className="badge metrics-stale" title={`Metrics stale: ${text}`}>
      stale{!brief && <span className="visually-hidden">: {text}</span>}
    </span>
  );
}
