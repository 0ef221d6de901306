// CodeMirror 6 for the rule pages, in a chunk of its own: only the rules editor
// and the proposal diff import this module (by dynamic import), so the
// console's first load never carries the editor.
import { yaml } from '@codemirror/lang-yaml';
import { syntaxHighlighting } from '@codemirror/language';
import { type Diagnostic, lintGutter, setDiagnostics } from '@codemirror/lint';
import { MergeView, unifiedMergeView } from '@codemirror/merge';
import { EditorState, type Extension } from '@codemirror/state';
import { EditorView, keymap } from '@codemirror/view';
import { basicSetup } from 'codemirror';
import type { TextProblem } from './problem-position';

/**
 * Tokens become classes (`tok-key`, `tok-string`…) coloured by rules.css with the
 * console's light/dark variables, so highlighting keeps its contrast in both themes.
 */
const TOKEN_CLASSES: [RegExp, string][] = [
  [/propertyName/, 'tok-key'],
  [/comment/i, 'tok-comment'],
  [/string|attributeValue/, 'tok-string'],
  [/labelName/, 'tok-label'],
  [/typeName/, 'tok-type'],
  [/keyword|meta/, 'tok-meta'],
  [/separator|punctuation|Bracket|brace/, 'tok-punct'],
];
const tokenHighlighter = syntaxHighlighting({
  style(tags) {
    for (const tag of tags) {
      const name = String(tag);
      for (const [pattern, cls] of TOKEN_CLASSES) if (pattern.test(name)) return cls;
    }
    return null;
  },
});

const theme = EditorView.theme({
  '&': { backgroundColor: 'var(--surface)', color: 'var(--text)', fontSize: '0.9rem' },
  '.cm-content': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', caretColor: 'var(--text)' },
  '.cm-gutters': { backgroundColor: 'var(--bg)', color: 'var(--muted)', borderRight: '1px solid var(--border)' },
  '.cm-activeLine': { backgroundColor: 'color-mix(in srgb, var(--accent) 7%, transparent)' },
  '.cm-activeLineGutter': { backgroundColor: 'color-mix(in srgb, var(--accent) 12%, transparent)', color: 'var(--text)' },
  '&.cm-focused': { outline: '2px solid var(--focus)', outlineOffset: '-2px' },
  '.cm-cursor': { borderLeftColor: 'var(--text)' },
  '.cm-tooltip': { backgroundColor: 'var(--surface)', color: 'var(--text)', border: '1px solid var(--border)' },
  '.cm-panels': { backgroundColor: 'var(--bg)', color: 'var(--text)' },
  '.cm-collapsedLines': { background: 'var(--bg)', color: 'var(--muted)', fontStyle: 'italic' },
  // @codemirror/merge marks folded lines with ⦚, which Debian's fonts lack (empty boxes): an arrow every font has.
  '.cm-collapsedLines:before, .cm-collapsedLines:after': { content: '"↕"' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection': {
    backgroundColor: 'color-mix(in srgb, var(--accent) 30%, transparent) !important',
  },
});

const common = (label: string): Extension[] => [
  basicSetup,
  yaml(),
  tokenHighlighter,
  theme,
  EditorView.lineWrapping,
  // An explicit tabindex: axe counts the text (contenteditable) as the scroll box's focusable content only with one.
  EditorView.contentAttributes.of({ 'aria-label': label, tabindex: '0' }),
];

export interface EditorHandle {
  setText(text: string): void;
  getText(): string;
  /** Marks problems in the text (1-based line and column); an empty list clears them. */
  setProblems(problems: TextProblem[]): void;
  /** Moves the cursor to a line and column and focuses the editor. */
  goTo(line: number, col: number): void;
  destroy(): void;
}

export type { TextProblem };

function offsetOf(state: EditorState, line: number, col: number): number {
  const l = state.doc.line(Math.min(Math.max(1, line), state.doc.lines));
  return Math.min(l.from + Math.max(0, col - 1), l.to);
}

/** An editable YAML editor in `parent`: `onChange` hears every edit, `onSave` Ctrl/Cmd+S. */
export function createEditor(
  parent: HTMLElement,
  options: { text: string; label: string; onChange(text: string): void; onSave(): void; readOnly?: boolean },
): EditorHandle {
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: options.text,
      extensions: [
        keymap.of([
          {
            key: 'Mod-s',
            preventDefault: true,
            run: () => {
              options.onSave();
              return true;
            },
          },
        ]),
        ...common(options.label),
        lintGutter(),
        EditorState.readOnly.of(Boolean(options.readOnly)),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) options.onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    setText(text) {
      if (text !== view.state.doc.toString()) view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    getText: () => view.state.doc.toString(),
    setProblems(problems) {
      const diagnostics: Diagnostic[] = problems.map((p) => {
        const from = offsetOf(view.state, p.line, p.col);
        const lineEnd = view.state.doc.lineAt(from).to;
        return { from, to: lineEnd, severity: 'error', message: p.message };
      });
      view.dispatch(setDiagnostics(view.state, diagnostics));
    },
    goTo(line, col) {
      const at = offsetOf(view.state, line, col);
      view.dispatch({ selection: { anchor: at }, scrollIntoView: true });
      view.focus();
    },
    destroy: () => view.destroy(),
  };
}

/**
 * A read-only diff of `left` (e.g. the live text) and `right` (the proposed one): side by side, or on a
 * narrow screen `unified` (one column, the left text's lines shown as removed above the right's).
 */
export function createDiff(
  parent: HTMLElement,
  options: { left: string; right: string; leftLabel: string; rightLabel: string; unified?: boolean },
): { destroy(): void } {
  // Read-only but focusable, so a keyboard user can move through (and scroll) both texts.
  const side = (label: string) => [...common(label), EditorState.readOnly.of(true)];
  const collapseUnchanged = { margin: 3, minSize: 6 };
  if (options.unified) {
    const view = new EditorView({
      parent,
      state: EditorState.create({
        doc: options.right,
        extensions: [
          ...side(`${options.rightLabel}, with the lines of ${options.leftLabel} it changes`),
          unifiedMergeView({ original: options.left, mergeControls: false, collapseUnchanged }),
        ],
      }),
    });
    return { destroy: () => view.destroy() };
  }
  const view = new MergeView({
    parent,
    a: { doc: options.left, extensions: side(options.leftLabel) },
    b: { doc: options.right, extensions: side(options.rightLabel) },
    gutter: true,
    highlightChanges: true,
    collapseUnchanged,
  });
  return { destroy: () => view.destroy() };
}
