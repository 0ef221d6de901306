// Marks our module-level zod schemas as pure for esbuild, so a bundle leaves out the ones
// its function never uses. zod/mini annotates its constructors `@__NO_SIDE_EFFECTS__`, but
// esbuild honours that annotation only for a function declared in the same file
// (evanw/esbuild#4369, open), so every schema constant of every module a function imports
// was kept and built when its bundle loaded: all of shared/routes/dashboard-schemas.ts's
// answers in each dashboard group, whichever it serves. A `/* @__PURE__ */` at the call
// itself is what esbuild does honour.
import { readFile } from 'node:fs/promises';
import type { Plugin } from 'esbuild';
import type * as TS from 'typescript';
import { functionsForArrows, typescriptModule, type TypeScript } from './arrow-functions.js';

/** The namespace our modules import zod as (`import * as z from '../zod.js'`, shared/zod.ts). */
const ZOD_NAMESPACE = 'z';
/**
 * Calls that do something besides returning a value: a chain naming one of these anywhere
 * (`z.parse(...)`, `z.string().parse(x)`, `.register(registry, meta)`) is never marked.
 */
const EFFECTFUL = new Set([
  'config',
  'globalRegistry',
  'register',
  'add',
  'parse',
  'safeParse',
  'parseAsync',
  'safeParseAsync',
  'encode',
  'decode',
  'safeEncode',
  'safeDecode',
  'encodeAsync',
  'decodeAsync',
  'safeEncodeAsync',
  'safeDecodeAsync',
  'toJSONSchema',
]);
const ANNOTATION = '/* @__PURE__ */ ';
/** Our own builders that only return what they are given or build (shared/http/route.ts's `defineGroup` is the identity). */
const PURE_BUILDERS = new Set(['defineGroup']);

interface Chain {
  /** The identifier the chain starts from (`z` in `z.string().check(z.maxLength(3))`), if it starts from one. */
  root: TS.Identifier | undefined;
  /** The member read right after the root (`string`); undefined for a call of the root itself (`defineGroup(...)`). */
  first: string | undefined;
  /** Every member the chain reads. */
  names: string[];
  /** The chain calls a function written in place (`(() => ...)()`): never marked. */
  invokesFunction: boolean;
}

/** What a call chain is made of, from its outermost call down to where it starts. */
function chainOf(ts: TypeScript, node: TS.Expression): Chain {
  const names: string[] = [];
  let expression: TS.Expression = node;
  let first: string | undefined;
  for (;;) {
    if (ts.isCallExpression(expression)) expression = expression.expression;
    else if (ts.isPropertyAccessExpression(expression)) {
      names.push(expression.name.text);
      if (ts.isIdentifier(expression.expression)) first = expression.name.text;
      expression = expression.expression;
    } else if (ts.isElementAccessExpression(expression)) {
      first = undefined;
      expression = expression.expression;
    } else if (
      ts.isNonNullExpression(expression) ||
      ts.isParenthesizedExpression(expression) ||
      ts.isAsExpression(expression) ||
      ts.isSatisfiesExpression(expression) ||
      ts.isTypeAssertionExpression(expression)
    )
      expression = expression.expression;
    else return { root: ts.isIdentifier(expression) ? expression : undefined, first, names, invokesFunction: ts.isFunctionLike(expression) };
  }
}

/** Whether `node` is a link inside a longer chain (`z.string()` in `z.string().check(...)`): esbuild reads a mark before the chain's start as the outermost call's. */
function insideChain(ts: TypeScript, node: TS.Node): boolean {
  let child: TS.Node = node;
  let parent = node.parent;
  while (parent && (ts.isParenthesizedExpression(parent) || ts.isNonNullExpression(parent) || ts.isAsExpression(parent) || ts.isSatisfiesExpression(parent))) {
    child = parent;
    parent = parent.parent;
  }
  if (!parent) return false;
  if (ts.isPropertyAccessExpression(parent) || ts.isElementAccessExpression(parent)) return parent.expression === child;
  return ts.isCallExpression(parent) && parent.expression === child;
}

/**
 * The source with `/* @__PURE__ *\/` before each zod call chain in a module-level variable's
 * initializer (not inside a function there: a `z.lazy` getter runs later anyway), and
 * before each `defineGroup`. A call marked so is dropped when its value is unused; its
 * arguments must be pure as well for the declaration to go, so every call chain inside such
 * a call's arguments is marked too: they are a schema's or a route table's pieces
 * (`Text(200)`, `HttpLink()`), evaluated only to build it. A declaration made by anything
 * else is kept, and so is any chain that names an effectful call.
 */
export function markPureSchemas(ts: TypeScript, fileName: string, source: string): string {
  if (!source.includes(`${ZOD_NAMESPACE}.`) && ![...PURE_BUILDERS].some((name) => source.includes(name))) return source;
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const positions: number[] = [];
  const visit = (node: TS.Node, inBuilder: boolean): void => {
    if (ts.isFunctionLike(node) || ts.isClassLike(node)) return;
    let builds = inBuilder;
    if (ts.isCallExpression(node) && !insideChain(ts, node)) {
      const { root, first, names, invokesFunction } = chainOf(ts, node);
      const zod = root?.text === ZOD_NAMESPACE && first !== undefined;
      const builder = root !== undefined && first === undefined && names.length === 0 && PURE_BUILDERS.has(root.text);
      if (invokesFunction || names.some((name) => EFFECTFUL.has(name))) builds = false;
      else if (zod || builder || inBuilder) builds = true;
      if (builds) positions.push(node.getStart(file));
    }
    ts.forEachChild(node, (child) => visit(child, builds));
  };
  for (const statement of file.statements) {
    const list = ts.isVariableStatement(statement) ? statement.declarationList : undefined;
    for (const declaration of list?.declarations ?? []) if (declaration.initializer) visit(declaration.initializer, false);
  }
  let marked = source;
  for (const at of positions.sort((a, b) => b - a)) {
    // After a `/` (a division written without a space) the comment would start a line comment.
    const annotation = marked[at - 1] === '/' ? ` ${ANNOTATION}` : ANNOTATION;
    marked = marked.slice(0, at) + annotation + marked.slice(at);
  }
  return marked;
}

/** The esbuild plugin: our own TypeScript modules (not node_modules), annotated as they load. */
export function pureSchemasPlugin(): Plugin {
  return {
    name: 'fleet-health-pure-schemas',
    setup(b) {
      b.onLoad({ filter: /\.ts$/, namespace: 'file' }, async ({ path }) => {
        if (/[\\/]node_modules[\\/]/.test(path) || path.endsWith('.d.ts')) return undefined;
        const ts = await typescriptModule();
        // Then its arrows as functions (arrow-functions.ts), which this load is the one place to do.
        return { contents: functionsForArrows(ts, path, markPureSchemas(ts, path, await readFile(path, 'utf8'))), loader: 'ts' };
      });
    },
  };
}
