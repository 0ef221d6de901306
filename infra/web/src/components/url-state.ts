// Filters, sorting and paging kept in the URL's query string, so a link (or a
// reload) reproduces the view. Defaults are left out of the URL.
import { useCallback, useMemo } from 'react';
import { useSearchParams } from 'react-router';

export type UrlValues<K extends string> = Record<K, string | string[]>;

/**
 * `const [filters, setFilters] = useUrlState({ q: '', tier: [] as string[], page: '1' })`: a string default is a
 * single value, an array default a repeated key (`?tier=S&tier=A`). Setting a filter replaces the history entry.
 * Pass the defaults as a module-level constant (they are a memo dependency).
 */
export function useUrlState<K extends string>(defaults: UrlValues<K>): [UrlValues<K>, (changes: Partial<UrlValues<K>>) => void] {
  const [params, setParams] = useSearchParams();
  const values = useMemo(() => {
    const out = {} as UrlValues<K>;
    for (const key of Object.keys(defaults) as K[]) {
      const fallback = defaults[key];
      out[key] = Array.isArray(fallback) ? (params.getAll(key).length ? params.getAll(key) : fallback) : (params.get(key) ?? fallback);
    }
    return out;
  }, [params, defaults]);
  const update = useCallback(
    (changes: Partial<UrlValues<K>>) =>
      setParams(
        () => {
          // The URL as it is now, not the router's `previous`: that is the parameters of the render that made this
          // `update`, and a change made later (a debounced search box writing 200 ms after typing) put back the
          // filters as they were then, undoing one clicked meanwhile.
          const next = new URLSearchParams(window.location.search);
          for (const [key, value] of Object.entries(changes) as [K, string | string[] | undefined][]) {
            next.delete(key);
            const fallback = defaults[key];
            if (value === undefined) continue;
            if (Array.isArray(value)) {
              if (JSON.stringify(value) !== JSON.stringify(fallback)) for (const v of value) next.append(key, v);
            } else if (value !== fallback) next.set(key, value);
          }
          return next;
        },
        // A filter or page written into the URL is no new page: the list stays where it is scrolled to (app.tsx).
        { replace: true, preventScrollReset: true },
      ),
    [setParams, defaults],
  );
  return [values, update];
}
