// Key-figure tiles for the AI pages: a labelled list, `…` while the first answer is on its way.
import { useId } from 'react';
import './ai.css';

export function KpiTiles({ tiles, note, busy }: { tiles: [string, string | undefined][]; note?: string; busy?: boolean }) {
  const id = useId();
  return (
    <section aria-labelledby={id} aria-busy={busy}>
      <h2 id={id} className="visually-hidden">
        Key figures
      </h2>
      {note && <p className="muted ai-kpi-note">{note}</p>}
      <ul className="tiles ai-kpis">
        {tiles.map(([label, value]) => (
          <li className="tile" key={label}>
            <div className="value">{value ?? '…'}</div>
            <div className="label">{label}</div>
          </li>
        ))}
      </ul>
    </section>
  );
}

export const usd = (v: number) => `$${v < 10 ? v.toFixed(v < 0.01 && v > 0 ? 4 : 2) : v.toFixed(0)}`;
export const seconds = (v: number) => (v < 60 ? `${v.toFixed(v < 10 ? 1 : 0)} s` : `${Math.floor(v / 60)} min ${Math.round(v % 60)} s`);
export const count = (v: number) => v.toLocaleString('en');
