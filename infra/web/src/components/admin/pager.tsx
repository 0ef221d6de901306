// Previous/next paging under a paged list; the page itself is the caller's (kept in the URL).
import './admin.css';

export function Pager({ page, pages, onPage, what }: { page: number; pages: number; onPage: (page: number) => void; what: string }) {
  if (pages <= 1 && page <= 1) return null;
  return (
    <nav className="admin-pager" aria-label={`Pages of the ${what} list`}>
      <button type="button" disabled={page <= 1} onClick={() => onPage(1)}>
        First
      </button>
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page} of {pages}
      </span>
      <button type="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next
      </button>
      <button type="button" disabled={page >= pages} onClick={() => onPage(pages)}>
        Last
      </button>
    </nav>
  );
}
