// What the browser's tab says: the page's name, then the console's. The shell names every page
// inside it from its heading; the pages outside it (sign-in, activation) name themselves.
import { useEffect } from 'react';

export const tabTitle = (page?: string) => (page ? `${page} · Fleet Health` : 'Fleet Health');

/** Names the tab after a page outside the shell: after a sign-out the tab still named the page left. */
export function useTabTitle(page: string): void {
  useEffect(() => {
    document.title = tabTitle(page);
  }, [page]);
}
