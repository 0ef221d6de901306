// A box that scrolls its wide table sideways: a labelled region a keyboard user can
// focus and scroll (axe: scrollable-region-focusable), labelled by the table's caption.
// With `maxHeight` it scrolls down too (a virtualised list measures it through `ref`).
import type { ReactNode, Ref } from 'react';

export function ScrollRegion({
  label,
  className,
  id,
  maxHeight,
  ref,
  children,
}: {
  label: string;
  className?: string;
  id?: string;
  maxHeight?: string;
  ref?: Ref<HTMLElement>;
  children: ReactNode;
}) {
  return (
    <section
      ref={ref}
      className={className ? `table-scroll ${className}` : 'table-scroll'}
      id={id}
      aria-label={label}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be focusable to be scrolled by keyboard
      tabIndex={0}
      style={maxHeight ? { maxHeight } : undefined}
    >
      {children}
    </section>
  );
}
