// Paging for the AI lists (page and page size kept in the URL by the caller).
import './ai.css';

const SIZES = ['10', '20', '50', '100'];

export function Pager({
  page,
  totalPages,
  pageSize,
  goTo,
  setSize,
}: {
  page: number;
  totalPages: number;
  pageSize: number;
  goTo: (page: number) => void;
  setSize: (size: string) => void;
}) {
  const last = Math.max(1, totalPages);
  return (
    <nav className="ai-pager" aria-label="Pages">
      <button type="button" onClick={() => goTo(1)} disabled={page <= 1}>
        First
      </button>
      <button type="button" onClick={() => goTo(Math.min(page - 1, last))} disabled={page <= 1}>
        Previous
      </button>
      <span aria-current="page">
        Page {page} of {last}
      </span>
      <button type="button" onClick={() => goTo(page + 1)} disabled={page >= last}>
        Next
      </button>
      <button type="button" onClick={() => goTo(last)} disabled={page >= last}>
        Last
      </button>
      <label className="ai-size">
        Per page
        <select value={String(pageSize)} onChange={(e) => setSize(e.target.value)}>
          {(SIZES.includes(String(pageSize)) ? SIZES : [...SIZES, String(pageSize)]).map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
    </nav>
  );
}

export const positive = (v: string, fallback: number) => {
  const n = Number.parseInt(v, 10);
  return Number.isFinite(n) && n >= 1 ? n : fallback;
};
