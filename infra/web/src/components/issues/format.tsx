// Small pieces both issue pages show: times, durations, severity and status
// badges, and ticket links (http(s) only, never javascript: or data:).
import { capitalised } from '../format';
import './issue-bits.css';

// Times are the console's one formatter (../time.tsx), kept importable from here.
export { utc, When } from '../time';

/** 1183 → `19 h 43 min`; 4500 → `3 d 3 h`. */
export function duration(minutes: number): string {
  if (minutes < 60) return `${minutes} min`;
  const h = Math.floor(minutes / 60);
  if (h < 24) return `${h} h ${minutes % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** Capitalised as the issue pages' severities are ("Critical"): an investigation's comes lowercase ("critical"). */
export function Severity({ value }: { value: string }) {
  return <span className={`badge ${value}`}>{capitalised(value)}</span>;
}

export function Status({ value }: { value: string }) {
  return <span className={`badge issue-status ${value}`}>{value}</span>;
}

/** A text that may be empty: `—` in the muted colour. */
export function Maybe({ value }: { value: string }) {
  return value ? value : <span className="muted">—</span>;
}

export const isWebLink = (url: string) => /^https?:\/\//i.test(url);

export function TicketLink({ ticketKey, url }: { ticketKey: string; url: string }) {
  if (!ticketKey) return <span className="muted">—</span>;
  return isWebLink(url) ? (
    <a href={url} target="_blank" rel="noreferrer noopener">
      {ticketKey}
      <span className="visually-hidden"> (opens in a new tab)</span>
    </a>
  ) : (
    ticketKey
  );
}
