// Times, lags and run outcomes as the metric-sources page shows them: every time
// both relative ("4 min ago") and absolute (UTC), every status as a word.
import type { Answer } from '../../api/types';
import { relative, utcSeconds } from '../time';
import { seconds } from '../format';

export type Status = Answer<'metric-sources', 'status'>;
export type Outcome = NonNullable<Status['last_run']>['outcome'];

/** A moment as "4 minutes ago (2026-11-24 19:45:12 UTC)"; `never` when there is none. */
export function When({ iso, now, never = 'never' }: { iso: string | null; now: number; never?: string }) {
  if (!iso) return <span className="muted">{never}</span>;
  return (
    <time dateTime={iso} title={utcSeconds(iso)}>
      {relative(iso, now)} <span className="muted">({utcSeconds(iso)})</span>
    </time>
  );
}

/** 45 → `45 s`; 750 → `12 min 30 s`; 11_100 → `3 h 5 min`; 187_200 → `2 d 4 h`. */
export function lag(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 && m < 10 ? `${m} min ${s % 60} s` : `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/**
 * 350 → `350 ms`; 4_200 → `4.2 s`; 125_000 → `2 min 5 s`. From a second on, `seconds` of ../format.ts, as every
 * page writes a duration; under one in milliseconds on purpose: a source's pull often takes a few hundred, and
 * "0.3 s" beside "0.4 s" hides the difference an operator comparing sources looks for.
 */
export function durationMs(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))} ms`;
  return seconds(ms / 1_000);
}

export { count } from '../format';

const OUTCOME: Record<Outcome, { cls: string; meaning: string }> = {
  ok: { cls: 'healthy', meaning: 'every metric pulled' },
  partial: { cls: 'warning', meaning: 'some metrics failed, or time ran out before the last window' },
  failed: { cls: 'critical', meaning: 'no metric pulled' },
  disabled: { cls: 'ms-off', meaning: 'the source is switched off' },
};

/** The run's outcome as a word badge, with what it means beside it. */
export function OutcomeBadge({ outcome }: { outcome: Outcome }) {
  const o = OUTCOME[outcome];
  return (
    <>
      <span className={`badge ${o.cls}`}>{outcome}</span> <span className="muted">{o.meaning}</span>
    </>
  );
}
