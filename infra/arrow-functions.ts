// Rewrites arrow functions as `function` expressions in what a Lambda bundle carries, where
// nothing changes but how V8 parses them. Node 22's V8 parses an arrow's body in full when it
// compiles the module that holds it; a `function`'s body is only pre-parsed until its first
// call, and most of a bundle never runs in a cold start (a module of 1,500 small arrows
// compiled in 44 ms, as `function`s in 17). Only an arrow that reads none of what an arrow
// takes from around it (`this`, `arguments`, `super`, `new.target`) is rewritten, so the two
// are the same function. esbuild's own lowering (`supported: { arrow: false }`) captures
// `this` instead, and gets it wrong in class fields and derived constructors.
import { readFile } from 'node:fs/promises';
import type { Plugin } from 'esbuild';
import type * as TS from 'typescript';

type TypeScript = Omit<typeof TS, 'default'>;

/** An insertion at `at`; at one position, what closes an inner arrow comes before what closes an outer one, then openings outer first. */
interface Edit {
  at: number;
  text: string;
  /** Characters removed from `at` (the `=>`). */
  remove?: number;
  /** 0: closes a body, 1: opens; then the arrow's depth (inner closings first, outer openings first). */
  order: [number, number];
}

/** The position of the first token at or after `at`: past white space and comments. */
function skipTrivia(text: string, at: number): number {
  for (;;) {
    while (/\s/.test(text[at] ?? '')) at++;
    if (text.startsWith('//', at)) at = text.indexOf('\n', at) === -1 ? text.length : text.indexOf('\n', at);
    else if (text.startsWith('/*', at)) at = text.indexOf('*/', at) + 2;
    else return at;
  }
}

/** `text` with each arrow that reads nothing enclosing written as a `function` expression. */
export function functionsForArrows(ts: TypeScript, path: string, text: string): string {
  if (!text.includes('=>')) return text;
  const kind = path.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, kind);
  const edits: Edit[] = [];
  /** Walks `node`'s subtree; true when it reads something an arrow takes from the function around it. */
  const scan = (node: TS.Node, parent: TS.Node | undefined, depth: number): boolean => {
    if (
      node.kind === ts.SyntaxKind.ThisKeyword ||
      node.kind === ts.SyntaxKind.SuperKeyword ||
      ts.isMetaProperty(node) ||
      (ts.isIdentifier(node) && (node.text === 'arguments' || node.text === 'eval'))
    )
      return true;
    let reads = false;
    ts.forEachChild(node, (child) => {
      if (scan(child, node, depth + 1)) reads = true;
    });
    // An arrow standing alone as a statement would read as a function declaration: left as it is.
    if (!reads && ts.isArrowFunction(node) && !(parent && ts.isExpressionStatement(parent))) rewrite(node, depth);
    return reads;
  };
  const rewrite = (node: TS.ArrowFunction, depth: number): void => {
    // Where the type parameters or the parameter list start (after `async `); `x => …` has no parentheses.
    const at = node.modifiers ? skipTrivia(text, node.modifiers.end) : node.getStart(file);
    const lone = text[at] === '(' || text[at] === '<' ? undefined : node.parameters[0]!;
    // Minified code writes `async(x)=>`: a space keeps `async` a word of its own.
    edits.push({ at, text: /[\w$]/.test(text[at - 1] ?? '') ? ' function ' : 'function ', order: [1, depth] });
    if (lone) {
      edits.push({ at, text: '(', order: [1, depth + 0.5] });
      edits.push({ at: lone.end, text: ')', order: [0, -depth] });
    }
    const arrow = node.equalsGreaterThanToken.getStart(file);
    edits.push({ at: arrow, text: '', remove: 2, order: [1, depth] });
    if (!ts.isBlock(node.body)) {
      edits.push({ at: node.body.getStart(file), text: '{ return ', order: [1, depth] });
      edits.push({ at: node.body.end, text: '; }', order: [0, -depth] });
    }
  };
  scan(file, undefined, 0);
  if (edits.length === 0) return text;
  // Applied from the end, so each position still means what it meant in `text`.
  edits.sort((a, b) => b.at - a.at || b.order[0] - a.order[0] || b.order[1] - a.order[1]);
  let out = text;
  for (const edit of edits) out = out.slice(0, edit.at) + edit.text + out.slice(edit.at + (edit.remove ?? 0));
  return out;
}

/** Dependencies' JavaScript, rewritten as it loads (our own TypeScript is, by pureSchemasPlugin); each file once per process. */
export function arrowFunctionsPlugin(): Plugin {
  return {
    name: 'fleet-health-arrow-functions',
    setup(b) {
      b.onLoad({ filter: /\.[cm]?js$/, namespace: 'file' }, async ({ path }) => {
        let rewritten = rewrittenFiles.get(path);
        if (rewritten === undefined) {
          const text = await readFile(path, 'utf8');
          const out = functionsForArrows(await typescriptModule(), path, text);
          // A file with no arrow to rewrite is left to esbuild to read.
          rewrittenFiles.set(path, (rewritten = out === text ? null : out));
        }
        return rewritten === null ? undefined : { contents: rewritten, loader: 'js' };
      });
    },
  };
}

const rewrittenFiles = new Map<string, string | null>();
let typescript: Promise<TypeScript> | undefined;
/** TypeScript's parser, a build-time dependency loaded only when a bundle is built. */
export const typescriptModule = (): Promise<TypeScript> => (typescript ??= import('typescript').then((m) => (m.default ?? m) as TypeScript));
