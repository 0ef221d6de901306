// Previous/next paging under a paged list; the page itself is the caller's (kept in the URL).
import './admin.css';
import { Button } from '../button';

export function Pager({ page, pages, onPage, what }: { page: number; pages: number; onPage: (page: number) => void; what: string }) {
  if (pages <= 1 && page <= 1) return null;
  return (
    <nav className="admin-pager" aria-label={`Pages of the ${what} list`}>
      <Button type="button" disabled={page <= 1} onClick={() => onPage(1)}>
        First
      </Button>
      <Button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </Button>
      <span>
        Page {page} of {pages}
      </span>
      <Button type="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next
      </Button>
      <Button type="button" disabled={page >= pages} onClick={() => onPage(pages)}>
        Last
      </Button>
    </nav>
  );
}
