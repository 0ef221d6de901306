// A button that keeps the keyboard focus while it cannot act. `disabled` is said with aria-disabled,
// not the disabled attribute: a focused button that becomes disabled (busy while its own request
// runs, or done) drops the focus to the top of the page, and a keyboard or screen-reader user starts
// again from the skip link (WCAG 2.4.3). Its click, and a form's implicit submission through it
// (Enter in a field), do nothing while it is disabled; assistive technology announces it as dimmed.
// A form's submit button held back by a field still missing says which: the browser's own message on
// that field (reportValidity), where Enter on an invitation without its name did nothing, silently.
import type { ComponentProps, MouseEvent } from 'react';

export function Button({ disabled, onClick, ...rest }: ComponentProps<'button'>) {
  return (
    <button
      {...rest}
      aria-disabled={disabled || undefined}
      onClick={(event: MouseEvent<HTMLButtonElement>) => {
        if (disabled) {
          event.preventDefault();
          if (rest.type === 'submit') event.currentTarget.form?.reportValidity();
          return;
        }
        onClick?.(event);
      }}
    />
  );
}
