// The rule editor (CodeMirror 6 with YAML) and the proposal diff (@codemirror/merge),
// each loading CodeMirror by dynamic import when first shown: the editor's chunk is
// fetched only by the pages that use it. Until it arrives, a loading state.
import { type Ref, useEffect, useImperativeHandle, useRef, useState } from 'react';
import { Problem } from '../states';
import type { EditorHandle, TextProblem } from './editor-kit';

export type { TextProblem };

const loadKit = () => import('./editor-kit');

function useKit() {
  const [kit, setKit] = useState<Awaited<ReturnType<typeof loadKit>> | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    loadKit().then(
      (k) => live && setKit(k),
      (e: unknown) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, []);
  return { kit, error };
}

export interface YamlEditorApi {
  setText(text: string): void;
  goTo(line: number, col: number): void;
}

interface EditorProps {
  /** The text when the editor is created; later changes go through `setText` (the editor owns the text). */
  initial: string;
  label: string;
  problems: TextProblem[];
  onChange(text: string): void;
  onSave(): void;
  ref?: Ref<YamlEditorApi>;
}

export function YamlEditor({ initial, label, problems, onChange, onSave, ref }: EditorProps) {
  const { kit, error } = useKit();
  const box = useRef<HTMLDivElement>(null);
  const handle = useRef<EditorHandle | null>(null);
  // The latest callbacks and text, without recreating the editor when they change.
  const latest = useRef({ initial, onChange, onSave, problems });
  latest.current = { initial, onChange, onSave, problems };

  useEffect(() => {
    if (!kit || !box.current) return;
    const editor = kit.createEditor(box.current, {
      text: latest.current.initial,
      label,
      onChange: (t) => latest.current.onChange(t),
      onSave: () => latest.current.onSave(),
    });
    editor.setProblems(latest.current.problems);
    handle.current = editor;
    return () => {
      editor.destroy();
      handle.current = null;
    };
  }, [kit, label]);

  useEffect(() => {
    handle.current?.setProblems(problems);
  }, [problems]);

  useImperativeHandle(ref, () => ({
    setText: (text) => handle.current?.setText(text),
    goTo: (line, col) => handle.current?.goTo(line, col),
  }));

  if (error) return <Problem error={error} />;
  return (
    <div className="rules-editor">
      {!kit && (
        <p className="state" role="status">
          Loading the editor…
        </p>
      )}
      <div ref={box} />
    </div>
  );
}

const NARROW = '(max-width: 700px)';

/** Whether the screen is phone-narrow, following changes (rotation, resizing). */
function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(() => window.matchMedia(NARROW).matches);
  useEffect(() => {
    const query = window.matchMedia(NARROW);
    const listener = () => setNarrow(query.matches);
    query.addEventListener('change', listener);
    return () => query.removeEventListener('change', listener);
  }, []);
  return narrow;
}

/** `left` (the live text) and `right` (the proposed or edited text), changes marked: side by side, or one column on a phone. */
export function YamlDiff({ left, right, leftLabel, rightLabel }: { left: string; right: string; leftLabel: string; rightLabel: string }) {
  const { kit, error } = useKit();
  const narrow = useNarrow();
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!kit || !box.current) return;
    const diff = kit.createDiff(box.current, { left, right, leftLabel, rightLabel, unified: narrow });
    return () => diff.destroy();
  }, [kit, left, right, leftLabel, rightLabel, narrow]);
  if (error) return <Problem error={error} />;
  return (
    <div className="rules-diff">
      {narrow ? (
        <p className="rules-diff-heads rules-diff-unified">
          {rightLabel}; the lines of {leftLabel} it replaces are shown above them, marked as removed.
        </p>
      ) : (
        <div className="rules-diff-heads" aria-hidden="true">
          <span>{leftLabel}</span>
          <span>{rightLabel}</span>
        </div>
      )}
      {!kit && (
        <p className="state" role="status">
          Loading the comparison…
        </p>
      )}
      <div ref={box} />
    </div>
  );
}
