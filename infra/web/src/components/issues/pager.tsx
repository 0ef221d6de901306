// Paging for the issue and AI lists: `set` writes page and page_size to the
// caller's URL state (a new size starts again at page 1). `variant` names the
// page's own pager styles (issues.css or ai.css).

import { Button } from '../button';

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
  // A Button: "Next" pressed onto the last page keeps the keyboard focus, and says it leads nowhere now.
  const step = (label: string, to: number, off: boolean) => (
    <Button type="button" disabled={off} onClick={() => goTo(to)}>
      {label}
    </Button>
  );
  return (
    <nav className={`${variant}-pager`} aria-label="Pages">
      {step('First', 1, page <= 1)}
      {step('Previous', Math.min(page - 1, last), page <= 1)}
      <span aria-current="page">
        Page {page} of {last}
      </span>
      {step('Next', page + 1, page >= last)}
      {step('Last', last, page >= last)}
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

/** A page (or size) from the URL: a whole number from 1, else the fallback; one past what a number holds exactly (an edited link) too, which the service would refuse. */
export const positive = (v: string, fallback: number) => {
  const n = Number.parseInt(v, 10);
  return Number.isSafeInteger(n) && n >= 1 ? n : fallback;
};
