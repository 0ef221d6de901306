// A sortable, virtualised table for long lists (fleet scores, alert issues): the
// rows are TanStack Table's, only those in view are in the DOM (TanStack Virtual),
// so thousands of rows stay fast. It stays a real <table>: sort headers are
// buttons with aria-sort, rows carry aria-rowindex, and ArrowUp/ArrowDown (PageUp/
// PageDown, Ctrl+Home/End) move focus from row to row, scrolling as they go.
// Sorting is kept by the table, or by the caller (`sorting`/`onSortingChange`),
// for example in the URL with `useUrlSorting`. Rows that arrive while the pointer
// moves over the table (a watch page's minute read) wait until it rests or leaves,
// so a row does not move from under a click (`useSteadyRows`).
import {
  type ColumnDef,
  flexRender,
  type Header,
  getCoreRowModel,
  getSortedRowModel,
  type OnChangeFn,
  type SortingState,
  useReactTable,
} from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';
import { type KeyboardEvent, type ReactNode, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { type UrlValues, useUrlState } from './url-state';
import './data-table.css';

/** Per-column extras, set as a column's `meta`. */
export interface DataTableColumnMeta {
  /** Right-aligned, tabular figures. */
  numeric?: boolean;
  /** Extra class on the column's cells. */
  className?: string;
  /** The row's name (a cluster's): its cells are row headers (`<th scope="row">`), so a screen reader says whose row a cell is in. */
  rowHeader?: boolean;
}

export interface DataTableProps<T> {
  data: T[];
  // biome-ignore lint/suspicious/noExplicitAny: TanStack's own idiom: columns of different value types in one list (createColumnHelper's accessors).
  columns: ColumnDef<T, any>[];
  /** Names the table for screen readers (a visually hidden caption) and its scroll region. */
  caption: string;
  /** A stable id per row (React keys, focus kept across re-sorts). */
  getRowId: (row: T) => string;
  /** Controlled sorting (e.g. `useUrlSorting`); without it the table keeps its own, starting at `initialSorting`. */
  sorting?: SortingState;
  onSortingChange?: OnChangeFn<SortingState>;
  initialSorting?: SortingState;
  /** The rows come in the order `sorting` names (a paged list the service sorts): the headers set it, the table sorts nothing, by one column. */
  manualSorting?: boolean;
  /** Estimated row height in px (rows are measured once rendered). */
  rowHeight?: number;
  /** The scroll area's maximum height (CSS); the header stays in view. */
  maxHeight?: string;
  /** Shown in the body when there are no rows. */
  empty?: ReactNode;
  rowClassName?: (row: T) => string | undefined;
}

const FOCUSABLE = 'a[href], button:not([disabled]), input, select, textarea, [tabindex]:not([tabindex="-1"])';

/** How long after the pointer last moved over a table new rows wait to be shown (unless it leaves first). */
export const STEADY_MS = 3_000;

/**
 * The rows to show: `data`, except that rows arriving while the pointer is moving over the table (someone aiming
 * at a row) are held back until it has rested STEADY_MS, leaves the table, or a key is pressed outside it (typing
 * in a filter wants its answer at once). The first rows are never held.
 */
function useSteadyRows<T>(data: T[]) {
  const busyUntil = useRef(0);
  const [held, setHeld] = useState<T[] | null>(null);
  const [last, setLast] = useState(data);
  if (data !== last) {
    // React's derived state: set during render, so the held rows are what this very render shows.
    setLast(data);
    if (held === null && last.length > 0 && Date.now() < busyUntil.current) setHeld(last);
  }
  const release = useCallback(() => {
    busyUntil.current = 0;
    setHeld(null);
  }, []);
  const holding = held !== null;
  useEffect(() => {
    if (!holding) return;
    let timer: ReturnType<typeof setTimeout>;
    const check = () => {
      const wait = busyUntil.current - Date.now();
      if (wait <= 0) release();
      else timer = setTimeout(check, wait);
    };
    check();
    return () => clearTimeout(timer);
  }, [holding, release]);
  const scroll = useRef<HTMLElement>(null);
  useEffect(() => {
    const onKey = (event: globalThis.KeyboardEvent) => {
      if (!(event.target instanceof Node && scroll.current?.contains(event.target))) release();
    };
    document.addEventListener('keydown', onKey, true);
    return () => document.removeEventListener('keydown', onKey, true);
  }, [release]);
  return {
    rows: held ?? data,
    scroll,
    onPointerMove: () => {
      busyUntil.current = Date.now() + STEADY_MS;
    },
    onPointerLeave: release,
  };
}

export function DataTable<T>({
  data,
  columns,
  caption,
  getRowId,
  sorting: controlled,
  onSortingChange,
  initialSorting = [],
  manualSorting = false,
  rowHeight = 36,
  maxHeight = 'min(70vh, 900px)',
  empty,
  rowClassName,
}: DataTableProps<T>) {
  const [own, setOwn] = useState<SortingState>(initialSorting);
  const sorting = controlled ?? own;
  const steady = useSteadyRows(data);
  const table = useReactTable({
    data: steady.rows,
    columns,
    state: { sorting },
    onSortingChange: onSortingChange ?? setOwn,
    getRowId: (row) => getRowId(row),
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
    // Three states per header, as in most data grids: its first order, the reverse, then the table's own order again
    // (the service's, or the page's default), which no header could bring back before.
    manualSorting,
    enableMultiSort: !manualSorting,
  });
  const rows = table.getRowModel().rows;
  const scrollRef = steady.scroll;
  const bodyRef = useRef<HTMLTableSectionElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => rowHeight,
    overscan: 12,
    // The first render, before the region is measured, has the rows of a window's height (the region is at most that):
    // rendered empty, the page was too short for the scroll position "Back" restores, which fell to its top.
    initialRect: { width: 0, height: window.innerHeight },
  });
  const items = virtualizer.getVirtualItems();
  const paddingTop = items.length ? items[0]!.start : 0;
  const paddingBottom = items.length ? virtualizer.getTotalSize() - items[items.length - 1]!.end : 0;
  const leafColumns = table.getVisibleLeafColumns();
  const minWidth = table.getTotalSize();

  /** Focuses row `index` (its first link or button, else the row), scrolling it into view and waiting for it to render. */
  // The row being moved to while it renders: keys pressed meanwhile count from it, not from the row still focused.
  const pending = useRef<number | null>(null);
  const focusRow = useCallback(
    (index: number) => {
      pending.current = index;
      virtualizer.scrollToIndex(index, { align: 'auto' });
      let tries = 0;
      const attempt = () => {
        if (pending.current !== index) return;
        const row = bodyRef.current?.querySelector<HTMLElement>(`tr[data-index="${index}"]`);
        if (row || tries++ >= 10) pending.current = null;
        if (row) (row.querySelector<HTMLElement>(FOCUSABLE) ?? row).focus();
        else if (pending.current === index) requestAnimationFrame(attempt);
      };
      requestAnimationFrame(attempt);
    },
    [virtualizer],
  );

  const onKeyDown = (event: KeyboardEvent<HTMLTableSectionElement>) => {
    const row = (event.target as HTMLElement).closest<HTMLElement>('tr[data-index]');
    if (!row || !rows.length) return;
    const at = pending.current ?? Number(row.dataset.index);
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? rowHeight * 10) / rowHeight) - 1);
    const last = rows.length - 1;
    let next: number | null = null;
    if (event.key === 'ArrowDown') next = Math.min(last, at + 1);
    else if (event.key === 'ArrowUp') next = Math.max(0, at - 1);
    else if (event.key === 'PageDown') next = Math.min(last, at + page);
    else if (event.key === 'PageUp') next = Math.max(0, at - page);
    else if (event.key === 'Home' && event.ctrlKey) next = 0;
    else if (event.key === 'End' && event.ctrlKey) next = last;
    if (next === null) return;
    event.preventDefault();
    if (next !== at) focusRow(next);
  };

  return (
    <section
      ref={scrollRef}
      className="table-scroll data-table"
      style={{ maxHeight }}
      aria-label={caption}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard to scroll it (WCAG 2.1.1).
      tabIndex={0}
      onPointerMove={steady.onPointerMove}
      onPointerLeave={steady.onPointerLeave}
    >
      <table style={{ minWidth }} aria-rowcount={rows.length + 1}>
        <caption className="visually-hidden">{caption}</caption>
        <colgroup>
          {leafColumns.map((column) => (
            <col key={column.id} style={{ width: column.getSize() }} />
          ))}
        </colgroup>
        <thead>
          {table.getHeaderGroups().map((group) => (
            <tr key={group.id} aria-rowindex={1}>
              {group.headers.map((header) => (
                <SortHeader key={header.id} header={header} />
              ))}
            </tr>
          ))}
        </thead>
        <tbody ref={bodyRef} onKeyDown={onKeyDown}>
          {rows.length === 0 && (
            <tr>
              <td colSpan={leafColumns.length} className="data-table-empty">
                {empty ?? 'Nothing to show.'}
              </td>
            </tr>
          )}
          {paddingTop > 0 && (
            // biome-ignore lint/a11y/noAriaHiddenOnFocusable: a spacer row standing for rows scrolled out of view; nothing in it, nothing focusable.
            <tr aria-hidden="true" className="data-table-pad">
              <td colSpan={leafColumns.length} style={{ height: paddingTop }} />
            </tr>
          )}
          {items.map((item) => {
            const row = rows[item.index]!;
            return (
              <tr
                key={row.id}
                ref={virtualizer.measureElement}
                data-index={item.index}
                aria-rowindex={item.index + 2}
                tabIndex={-1}
                className={rowClassName?.(row.original)}
              >
                {row.getVisibleCells().map((cell) => {
                  const meta = cell.column.columnDef.meta as DataTableColumnMeta | undefined;
                  const className = [meta?.numeric ? 'num' : '', meta?.className ?? ''].filter(Boolean).join(' ') || undefined;
                  const content = flexRender(cell.column.columnDef.cell, cell.getContext());
                  return meta?.rowHeader ? (
                    <th key={cell.id} scope="row" className={className}>
                      {content}
                    </th>
                  ) : (
                    <td key={cell.id} className={className}>
                      {content}
                    </td>
                  );
                })}
              </tr>
            );
          })}
          {paddingBottom > 0 && (
            // biome-ignore lint/a11y/noAriaHiddenOnFocusable: a spacer row standing for rows scrolled out of view; nothing in it, nothing focusable.
            <tr aria-hidden="true" className="data-table-pad">
              <td colSpan={leafColumns.length} style={{ height: paddingBottom }} />
            </tr>
          )}
        </tbody>
      </table>
    </section>
  );
}

/**
 * A column's header cell: a sortable column's label is a button with its order mark (▲ ▼, ↕ when unsorted), and the
 * cell of the column that sorts the rows first says its order in aria-sort (WAI-ARIA puts it on one header at a time:
 * not "none" on every other, nor on a second order Shift added); any other column's is its label. DataTable's headers, and those of a table that lays out its own
 * rows (the health page's, whose clusters open in place).
 */
export function SortHeader<T>({ header }: { header: Header<T, unknown> }) {
  const meta = header.column.columnDef.meta as DataTableColumnMeta | undefined;
  const sorted = header.column.getIsSorted();
  const canSort = header.column.getCanSort();
  const label = header.isPlaceholder ? null : flexRender(header.column.columnDef.header, header.getContext());
  return (
    <th
      scope="col"
      className={meta?.numeric ? 'num' : undefined}
      aria-sort={header.column.getSortIndex() === 0 ? (sorted === 'asc' ? 'ascending' : 'descending') : undefined}
    >
      {canSort ? (
        <button
          type="button"
          className="sort-button"
          onClick={header.column.getToggleSortingHandler()}
          title={`Sort: a third click restores the table's own order${header.column.getCanMultiSort() ? '; Shift adds a second order' : ''}`}
        >
          {label}
          <span className={`sort-mark${sorted ? ' on' : ''}`} aria-hidden="true">
            {sorted === 'asc' ? '▲' : sorted === 'desc' ? '▼' : '↕'}
          </span>
        </button>
      ) : (
        label
      )}
    </th>
  );
}

/** `[{id:'score',desc:false},{id:'name',desc:true}]` ↔ `score,-name`. */
export function encodeSorting(sorting: SortingState): string {
  return sorting.map((s) => `${s.desc ? '-' : ''}${s.id}`).join(',');
}
export function decodeSorting(value: string): SortingState {
  return value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => (part.startsWith('-') ? { id: part.slice(1), desc: true } : { id: part, desc: false }));
}

/**
 * Sorting kept in the URL (`?sort=score,-name`), so a link reproduces the order:
 * `const [sorting, setSorting] = useUrlSorting('tier_adjusted_score')`, then `<DataTable sorting={sorting} onSortingChange={setSorting} …/>`.
 * `fallback` is the encoded default (left out of the URL), and what a header's third click, leaving no order, restores.
 */
export function useUrlSorting(fallback: string, key = 'sort'): [SortingState, OnChangeFn<SortingState>] {
  const defaults = useMemo(() => ({ [key]: fallback }) as UrlValues<string>, [key, fallback]);
  const [values, setValues] = useUrlState(defaults);
  const encoded = values[key] as string;
  const sorting = useMemo(() => decodeSorting(encoded), [encoded]);
  const setSorting = useCallback<OnChangeFn<SortingState>>(
    (updater) => {
      const next = typeof updater === 'function' ? updater(sorting) : updater;
      setValues({ [key]: next.length ? encodeSorting(next) : fallback });
    },
    [setValues, key, sorting, fallback],
  );
  return [sorting, setSorting];
}
