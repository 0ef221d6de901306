// Previous/next paging under a paged list (issues, AI lists, patrol, investigations, audit).
// The page is the caller's, kept in its URL state: `set` writes `page` (and `page_size`,
// when the list offers a size: a new size starts again at page 1).
import './pager.css';
import { Button } from './button';
import { count } from './format';

const SIZES = ['10', '20', '50', '100'];

export function Pager({
  page,
  totalPages,
  pageSize,
  set,
  label = 'Pages',
}: {
  page: number;
  totalPages: number;
  /** The list's page size; without it, no size choice. */
  pageSize?: number;
  set: (changes: { page: string; page_size?: string }) => void;
  label?: string;
}) {
  const last = Math.max(1, totalPages);
  // Past the last page (an old link) the list says so and offers the last page (PastLastPage in states.tsx): "Page 99 of 6" under it contradicted it.
  if (page > last) return null;
  const goTo = (p: number) => set({ page: String(p) });
  // A Button: "Next" pressed onto the last page keeps the keyboard focus, and says it leads nowhere now.
  const step = (text: string, to: number, off: boolean) => (
    <Button type="button" disabled={off} onClick={() => goTo(to)}>
      {text}
    </Button>
  );
  return (
    <nav className="pager" aria-label={label}>
      {step('First', 1, page <= 1)}
      {step('Previous', page - 1, page <= 1)}
      <span aria-current="page">
        Page {count(page)} of {count(last)}
      </span>
      {step('Next', page + 1, page >= last)}
      {step('Last', last, page >= last)}
      {pageSize !== undefined && (
        <label className="pager-size">
          Per page
          <select value={String(pageSize)} onChange={(e) => set({ page_size: e.target.value, page: '1' })}>
            {(SIZES.includes(String(pageSize)) ? SIZES : [...SIZES, String(pageSize)]).map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      )}
    </nav>
  );
}

/** A page (or size) from the URL: a whole number from 1, else the fallback; one past what a number holds exactly (an edited link) too, which the service would refuse. */
export const positive = (v: string, fallback: number) => {
  const n = Number.parseInt(v, 10);
  return Number.isSafeInteger(n) && n >= 1 ? n : fallback;
};
