// Rewrites arrow functions as `function` expressions in what a Lambda bundle carries, where
// nothing changes but how V8 parses them. Node 22's V8 parses an arrow's body in full when it
// compiles the module that holds it; a `function`'s body is only pre-parsed until its first
// call, and most of a bundle never runs in a cold start (a module of 1,500 small arrows
// compiled in 44 ms, as `function`s in 17). Only an arrow that reads none of what an arrow
// takes from around it (`this`, `arguments`, `super`, `new.target`) is rewritten, so the two
// compute the same (the `function` has a `prototype` and its own source text, which no
// bundled code looks at). esbuild's own lowering (`supported: { arrow: false }`) captures
// `this` instead, and gets it wrong in class fields and derived constructors.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import type * as TS from 'typescript';

/** The compiler's API as either import form hands it (the namespace has a `default` too). */
export type TypeScript = Omit<typeof TS, 'default'>;

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
    else if (text.startsWith('/*', at)) at = text.indexOf('*/', at) === -1 ? text.length : text.indexOf('*/', at) + 2;
    else return at;
  }
}

/** `text` with each arrow that reads nothing enclosing written as a `function` expression. */
export function functionsForArrows(ts: TypeScript, path: string, text: string): string {
  if (!text.includes('=>')) return text;
  const kind = path.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, kind);
  const edits: Edit[] = [];
  // Where an expression statement or a default export begins: a `function` there would be a declaration.
  const statementStarts = new Set<number>();
  /** Walks `node`'s subtree; true when it reads something an arrow takes from the function around it. */
  const scan = (node: TS.Node, depth: number): boolean => {
    if (
      node.kind === ts.SyntaxKind.ThisKeyword ||
      node.kind === ts.SyntaxKind.SuperKeyword ||
      ts.isMetaProperty(node) ||
      (ts.isIdentifier(node) && (node.text === 'arguments' || node.text === 'eval'))
    )
      return true;
    if (ts.isExpressionStatement(node) || ts.isExportAssignment(node)) statementStarts.add(node.expression.getStart(file));
    let reads = false;
    ts.forEachChild(node, (child) => {
      if (scan(child, depth + 1)) reads = true;
    });
    if (!reads && ts.isArrowFunction(node) && !statementStarts.has(node.getStart(file))) rewrite(node, depth);
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
    // No arrow can be called, indexed or tagged where it stands, so a line after one that starts with `(`, `[`, a
    // template or an operator began a statement of its own (ASI); after a `function` it would continue it.
    const next = skipTrivia(text, node.end);
    if ('([`+-/*'.includes(text[next] ?? ';') && /[\n\r\u2028\u2029]/.test(text.slice(node.end, next)))
      edits.push({ at: node.end, text: ';', order: [0, -depth + 0.5] });
  };
  scan(file, 0);
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
        // One read per file however many builds of the process load it at once.
        let pending = rewrittenFiles.get(path);
        if (pending === undefined) rewrittenFiles.set(path, (pending = rewrittenFile(path)));
        const rewritten = await pending;
        // A file with no arrow to rewrite is left to esbuild to read.
        return rewritten === null ? undefined : { contents: rewritten, loader: 'js' };
      });
    },
  };
}

/**
 * A dependency file rewritten, or null when it has nothing to rewrite. Kept on disk under node_modules/.cache by
 * path, size, modification time and this module's version: a CI run builds the bundles four times, in as many
 * processes, and parsing every dependency file is most of what the rewrite costs a build.
 */
async function rewrittenFile(path: string): Promise<string | null> {
  const { size, mtimeMs } = await stat(path);
  const cached = join(CACHE, `${createHash('sha256').update(`${REWRITE_VERSION}\0${path}\0${size}\0${mtimeMs}`).digest('hex')}.js`);
  const hit = await readFile(cached, 'utf8').catch(() => undefined);
  if (hit !== undefined) return hit === '' ? null : hit;
  const text = await readFile(path, 'utf8');
  const out = functionsForArrows(await typescriptModule(), path, text);
  const rewritten = out === text ? null : out;
  // Written whole, then renamed: builds in parallel processes never read half a file.
  await mkdir(CACHE, { recursive: true });
  const partial = `${cached}.${process.pid}.${(written += 1)}.tmp`;
  await writeFile(partial, rewritten ?? '');
  await rename(partial, cached);
  return rewritten;
}
/** Bumped when the rewrite changes, so no file rewritten the old way is read from the cache. */
const REWRITE_VERSION = 1;
const CACHE = join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', '.cache', 'arrow-functions');

/** By path, for the build process's life (a build reads each dependency file once; `npm run build` is a process of its own). */
const rewrittenFiles = new Map<string, Promise<string | null>>();
let written = 0;
let typescript: Promise<TypeScript> | undefined;
/** TypeScript's parser, a build-time dependency loaded only when a bundle is built. */
export const typescriptModule = (): Promise<TypeScript> => (typescript ??= import('typescript').then((m) => (m.default ?? m) as TypeScript));
