// Key-figure tiles for the AI pages: a labelled list, `…` while the first answer is on its way.
// A tile marked wide (a date and time) spans two columns, so its value stays on one line.
import { useId } from 'react';
import './ai.css';

export function KpiTiles({ tiles, note, busy }: { tiles: [string, string | undefined, 'wide'?][]; note?: string; busy?: boolean }) {
  const id = useId();
  return (
    <section aria-labelledby={id} aria-busy={busy}>
      <h2 id={id} className="visually-hidden">
        Key figures
      </h2>
      {note && <p className="muted ai-kpi-note">{note}</p>}
      <ul className="tiles ai-kpis">
        {tiles.map(([label, value, wide]) => (
          <li className={wide ? 'tile wide' : 'tile'} key={label}>
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
