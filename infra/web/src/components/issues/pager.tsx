// Paging for the issue and AI lists: `set` writes page and page_size to the
// caller's URL state (a new size starts again at page 1). `variant` names the
// page's own pager styles (issues.css or ai.css).

const SIZES = ['10', '20', '50', '100'];

export function Pager({
  page,
  totalPages,
  pageSize,
  set,
  variant,
}: {
  page: number;
  totalPages: number;
  pageSize: number;
  set: (changes: { page: string; page_size?: string }) => void;
  variant: 'issues' | 'ai';
}) {
  const last = Math.max(1, totalPages);
  const goTo = (p: number) => set({ page: String(p) });
  return (
    <nav className={`${variant}-pager`} aria-label="Pages">
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
      <label className={`${variant}-size`}>
        Per page
        <select value={String(pageSize)} onChange={(e) => set({ page_size: e.target.value, page: '1' })}>
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
