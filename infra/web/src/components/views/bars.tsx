// Horizontal bar charts in CSS: one row per item, the bar's length its value
// against the largest, an optional threshold mark, and the value as text. It is a
// list with each value spelled out, so screen readers read the same data.
import type { ReactNode } from 'react';
import { fmt } from './common';

export interface Bar {
  key: string;
  label: ReactNode;
  /** Values drawn as overlapping bars, the first the widest colour. */
  values: { name: string; value: number }[];
  /** Drawn as a mark across the bar; values past it are drawn as over. */
  threshold?: number;
}

export function Bars({ title, items, unit = '', legend }: { title: string; items: Bar[]; unit?: string; legend?: ReactNode }) {
  const max = Math.max(1, ...items.flatMap((b) => [...b.values.map((v) => v.value), b.threshold ?? 0]));
  const pct = (v: number) => `${Math.max(0, Math.min(100, (v / max) * 100))}%`;
  return (
    <figure className="bars">
      <figcaption>{title}</figcaption>
      {legend}
      <ul>
        {items.map((b) => (
          <li key={b.key} className="bars-item">
            <span className="bars-label">{b.label}</span>
            <span className="bars-track" data-series={b.values.length} aria-hidden="true">
              {b.values.map((v, i) => (
                <span
                  key={v.name}
                  className={`bars-fill s${i}${b.threshold != null && v.value >= b.threshold ? ' over' : ''}`}
                  style={{ width: pct(v.value) }}
                />
              ))}
              {b.threshold != null && <span className="bars-threshold" style={{ left: pct(b.threshold) }} />}
            </span>
            <span className="bars-value">
              {b.values.map((v, i) => (
                <span key={v.name}>
                  {i > 0 && ' · '}
                  {b.values.length > 1 && <span className="muted">{v.name} </span>}
                  {fmt(v.value)}
                  {unit}
                </span>
              ))}
              {b.threshold != null && <span className="visually-hidden"> (threshold {fmt(b.threshold)})</span>}
            </span>
          </li>
        ))}
      </ul>
    </figure>
  );
}
