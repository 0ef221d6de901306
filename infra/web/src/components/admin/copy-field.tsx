// A read-only text with a Copy button (the activation link an inviter hands over):
// the text is selectable by hand too, and the copy is confirmed to screen readers.
import { useId, useState } from 'react';
import './admin.css';

export function CopyField({ label, value }: { label: string; value: string }) {
  const id = useId();
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('yes');
    } catch {
      (document.getElementById(id) as HTMLInputElement | null)?.select();
      setCopied('no');
    }
  };
  return (
    <div className="copy-field">
      <label htmlFor={id}>{label}</label>
      <div className="copy-field-row">
        <input id={id} readOnly value={value} onFocus={(e) => e.currentTarget.select()} spellCheck={false} />
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      <span className="muted copy-field-note" aria-live="polite">
        {copied === 'yes' ? 'Copied.' : copied === 'no' ? 'Copying was refused by the browser: the link is selected, copy it with Ctrl+C.' : ''}
      </span>
    </div>
  );
}
