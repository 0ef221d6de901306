// A box that scrolls its wide table sideways: a labelled region a keyboard user can
// focus and scroll (axe: scrollable-region-focusable), labelled by the table's caption.
import type { ReactNode } from 'react';

export function ScrollRegion({ label, className, id, children }: { label: string; className?: string; id?: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be focusable to be scrolled by keyboard
    <section className={className ? `table-scroll ${className}` : 'table-scroll'} id={id} aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}
