// Links between a list and its items' pages that keep the list's filters: the list's
// link carries its URL (query included) in the history entry's state, and the item's
// back link returns there. An item's link to another item of the same list (an issue's
// other issues) passes that way back on. Opened any other way (a bookmark, another page's
// link), the back link is the plain list. History state survives a reload, so does the way back.
import { Link, type LinkProps, useLocation } from 'react-router';

/** What a list leaves in the state of the page it opens: its own path and query. */
interface FromList {
  list: string;
}

/** A link from a list to one of its items, remembering the list as it is now (its filters in the URL). */
export function ItemLink(props: Omit<LinkProps, 'state'>) {
  const { pathname, search } = useLocation();
  const state: FromList = { list: pathname + search };
  return <Link {...props} state={state} />;
}

/**
 * A link from one item to another of the same list (an issue to another issue): the page it opens
 * keeps the way back this page was opened with, so its back link still returns to the list as it was left.
 */
export function SiblingLink(props: Omit<LinkProps, 'state'>) {
  const from = (useLocation().state as Partial<FromList> | null)?.list;
  const state: FromList | undefined = typeof from === 'string' ? { list: from } : undefined;
  return <Link {...props} state={state} />;
}

/** The way back to `list` (a path): with the filters it was left with when this page was opened from it, else the plain list. */
export function useListUrl(list: string): string {
  const from = (useLocation().state as Partial<FromList> | null)?.list;
  // Only that list's own URL: a state left by another page (the cluster page's issues) is not this list's filters.
  return typeof from === 'string' && from.split('?')[0] === list ? from : list;
}

/** "← {children}", back to the list as it was left. */
export function BackLink({ list, children }: { list: string; children: React.ReactNode }) {
  return <Link to={useListUrl(list)}>← {children}</Link>;
}
