// A text field kept in the URL without a request per keystroke: the draft is
// local, committed after a pause (and only when valid); a change of the URL
// from elsewhere (clearing the filters, back/forward) replaces the draft.
import { useEffect, useRef, useState } from 'react';

export function useDraft(urlValue: string, commit: (value: string) => void, valid: (value: string) => boolean = () => true, delayMs = 300) {
  const [draft, setDraft] = useState(urlValue);
  const committed = useRef(urlValue);
  const commitRef = useRef(commit);
  const validRef = useRef(valid);
  useEffect(() => {
    commitRef.current = commit;
    validRef.current = valid;
  });
  useEffect(() => {
    if (urlValue !== committed.current) {
      committed.current = urlValue;
      setDraft(urlValue);
    }
  }, [urlValue]);
  useEffect(() => {
    if (draft === committed.current || !validRef.current(draft)) return;
    const timer = setTimeout(() => {
      committed.current = draft;
      commitRef.current(draft);
    }, delayMs);
    return () => clearTimeout(timer);
  }, [draft, delayMs]);
  return [draft, setDraft] as const;
}
