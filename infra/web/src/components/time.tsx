// Every time the console shows, in one place: UTC, written ISO-like and labelled "UTC"
// (`2026-11-24 19:45 UTC`), never the browser's zone, so an ops team spread over time
// zones reads the same instant the same way on every page. A table whose column header
// says "(UTC)" leaves the label off its cells (`{ label: false }`). Charts follow the
// same rule (line-chart.tsx); relative times ("4 minutes ago") are zone-free.

import { useEffect, useState } from 'react';

/** An instant: an ISO string as the API sends it, epoch milliseconds, or a Date. */
export type Instant = string | number | Date;

interface Options {
  /** Append " UTC" (the default); false where a column header already says UTC. */
  label?: boolean;
}

const millis = (t: Instant) => (typeof t === 'string' ? Date.parse(t) : typeof t === 'number' ? t : t.getTime());

/**
 * The `from`..`to` slice of the instant's ISO form, its `T` a space. None (null, undefined, '') → `—`;
 * unparsable → the string as given (a number or Date that is no time → `—`).
 */
function format(t: Instant | null | undefined, from: number, to: number, o: Options | undefined): string {
  if (t == null || t === '') return '—';
  const ms = millis(t);
  if (!Number.isFinite(ms)) return typeof t === 'string' ? t : '—';
  const text = new Date(ms).toISOString().slice(from, to).replace('T', ' ');
  return o?.label === false ? text : `${text} UTC`;
}

/** Date and minutes: `2026-11-24T19:45:12.000Z` → `2026-11-24 19:45 UTC`. */
export const utc = (t: Instant | null | undefined, o?: Options) => format(t, 0, 16, o);

/** Date and seconds: `2026-11-24T19:45:12.000Z` → `2026-11-24 19:45:12 UTC`. */
export const utcSeconds = (t: Instant | null | undefined, o?: Options) => format(t, 0, 19, o);

/** Date, seconds and milliseconds: `2026-11-24T19:45:12.001Z` → `2026-11-24 19:45:12.001 UTC` (where a listing starts). */
export const utcMillis = (t: Instant | null | undefined, o?: Options) => format(t, 0, 23, o);

/** Time of day: `19:45 UTC`, or `19:45:12 UTC` with `seconds`. */
export const utcTime = (t: Instant | null | undefined, o?: Options & { seconds?: boolean }) => format(t, 11, o?.seconds ? 19 : 16, o);

/** The machine-readable form for `<time dateTime>`: a string as given, a number or Date as its ISO string ('' when it is no time). */
export function isoOf(t: Instant): string {
  if (typeof t === 'string') return t;
  const ms = millis(t);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : '';
}

/**
 * A moment as `<time dateTime=…>2026-11-24 19:45 UTC</time>` (`label={false}` under a "(UTC)" header; `seconds` beside
 * a time the API writes to the second, as an alert's start); none → a muted `—`. Where its cell or sentence wraps, a
 * line ends between the date and the time, never inside either ("2026-12-" above "05 23:09"): each is a `.when-part`.
 */
export function When({ iso, label, seconds }: { iso: string | null | undefined; label?: boolean; seconds?: boolean }) {
  if (!iso) return <span className="muted">—</span>;
  const text = (seconds ? utcSeconds : utc)(iso, { label });
  const space = text.indexOf(' ');
  if (space < 0) return <time dateTime={iso}>{text}</time>;
  return (
    <time dateTime={iso}>
      <span className="when-part">{text.slice(0, space)}</span> <span className="when-part">{text.slice(space + 1)}</span>
    </time>
  );
}

const relativeFormat = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

/** `iso` against `now`: "just now", "12 seconds ago", "4 minutes ago", "30 hours ago", "3 days ago". */
export function relative(iso: string, now: number): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  // `now` ticks every few seconds: a moment a fresh answer names may be just past it.
  const s = Math.round((ms - Math.max(now, Date.now())) / 1000);
  const abs = Math.abs(s);
  if (abs < 5) return 'just now';
  if (abs < 60) return relativeFormat.format(s, 'second');
  if (abs < 3_600) return relativeFormat.format(Math.round(s / 60), 'minute');
  if (abs < 172_800) return relativeFormat.format(Math.round(s / 3_600), 'hour');
  return relativeFormat.format(Math.round(s / 86_400), 'day');
}

/** Re-renders every `ms` so relative times stay true between refetches. */
export function useNow(ms = 15_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}
