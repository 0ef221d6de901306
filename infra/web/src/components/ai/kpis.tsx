// Key-figure tiles for the AI pages: a labelled list, `…` while the first answer is on its way.
// A tile marked wide (a date and time) spans two columns, so its value stays on one line.
import { type ReactNode, useId } from 'react';
import './ai.css';

/** A tile: its label (text, or a link to what it counts), its value, and whether it is wide. */
export function KpiTiles({ tiles, note, busy }: { tiles: [ReactNode, string | undefined, 'wide'?][]; note?: string; busy?: boolean }) {
  const id = useId();
  return (
    <section aria-labelledby={id} aria-busy={busy}>
      <h2 id={id} className="visually-hidden">
        Key figures
      </h2>
      {note && <p className="muted ai-kpi-note">{note}</p>}
      <ul className="tiles ai-kpis">
        {tiles.map(([label, value, wide], i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a page's tiles are fixed, in a fixed order
          <li className={wide ? 'tile wide' : 'tile'} key={i}>
            <div className="value">{value ?? '…'}</div>
            <div className="label">{label}</div>
          </li>
        ))}
      </ul>
    </section>
  );
}

// The figures' formats, shared with the LLM cost page.
export { count, seconds, usd } from '../format';
