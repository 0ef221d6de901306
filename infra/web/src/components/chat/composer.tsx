// Where the message is written: Enter sends, Shift+Enter starts a new line (and
// Enter while an input method is composing does neither). The text stays when
// sending fails, so nothing typed is lost.
import { type FormEvent, type KeyboardEvent, type RefObject, useId } from 'react';
import { Button } from '../button';

export const MAX_MESSAGE = 8000;

export function Composer({
  value,
  onChange,
  onSend,
  busy,
  inputRef,
}: {
  value: string;
  onChange: (text: string) => void;
  onSend: () => void;
  busy: boolean;
  inputRef: RefObject<HTMLTextAreaElement | null>;
}) {
  const hint = useId();
  const empty = value.trim().length === 0;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!busy && !empty) onSend();
  };
  const keyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key !== 'Enter' || event.shiftKey || event.nativeEvent.isComposing) return;
    event.preventDefault();
    if (!busy && !empty) onSend();
  };
  return (
    <form className="chat-composer" onSubmit={submit}>
      <label className="chat-input">
        <span className="visually-hidden">Message</span>
        <textarea
          ref={inputRef}
          value={value}
          onChange={(e) => onChange(e.target.value)}
          onKeyDown={keyDown}
          rows={3}
          maxLength={MAX_MESSAGE}
          placeholder="Ask the assistant about the fleet…"
          aria-describedby={hint}
        />
      </label>
      <div className="chat-actions">
        <p id={hint} className="muted chat-hint">
          Enter sends · Shift+Enter for a new line
          {value.length > MAX_MESSAGE * 0.9 && ` · ${MAX_MESSAGE - value.length} characters left`}
        </p>
        <Button type="submit" className="primary" disabled={busy || empty}>
          Send
        </Button>
      </div>
    </form>
  );
}
