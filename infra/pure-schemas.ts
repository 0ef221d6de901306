// Marks our module-level zod schemas as pure for esbuild, so a bundle leaves out the ones
// its function never uses. zod/mini annotates its constructors `@__NO_SIDE_EFFECTS__`, but
// esbuild honours that annotation only for a function declared in the same file
// (evanw/esbuild#4369, open), so every schema constant of every module a function imports
// was kept and built when its bundle loaded: all of shared/routes/dashboard-schemas.ts's
// answers in each dashboard group, every route group's request schemas in the OpenAPI
// builder's… A `/* @__PURE__ */` at the call itself is what esbuild does honour.
import { readFile } from 'node:fs/promises';
import type { Plugin } from 'esbuild';
import type * as TS from 'typescript';

/** The compiler's API as either import form hands it (the namespace has a `default` too). */
type TypeScript = Omit<typeof TS, 'default'>;

/** The namespace our modules import zod as (`import * as z from '../zod.js'`, shared/zod.ts). */
const ZOD_NAMESPACE = 'z';
/** zod functions whose call does something besides returning a value: never marked, wherever they are. */
const EFFECTFUL = new Set(['config', 'globalRegistry', 'parse', 'safeParse', 'parseAsync', 'safeParseAsync', 'encode', 'decode', 'toJSONSchema']);
const ANNOTATION = '/* @__PURE__ */ ';

/** The identifier a call chain starts from: `z` for `z.string().check(z.maxLength(3))`. */
function chainRoot(ts: TypeScript, node: TS.Expression): { root: TS.Identifier | undefined; first: string | undefined } {
  let expression: TS.Expression = node;
  let first: string | undefined;
  for (;;) {
    if (ts.isCallExpression(expression)) expression = expression.expression;
    else if (ts.isPropertyAccessExpression(expression)) {
      if (ts.isIdentifier(expression.expression)) first = expression.name.text;
      expression = expression.expression;
    } else if (ts.isNonNullExpression(expression) || ts.isParenthesizedExpression(expression)) expression = expression.expression;
    else return { root: ts.isIdentifier(expression) ? expression : undefined, first };
  }
}

/** Our own builders that only return what they are given or build (shared/http/route.ts's `defineGroup` is the identity). */
const PURE_BUILDERS = new Set(['defineGroup']);

/**
 * The source with `/* @__PURE__ *\/` before each zod call in a module-level variable's
 * initializer (not inside a function there: a `z.lazy` getter runs later anyway), and
 * before each `defineGroup`. A call marked so is dropped when its value is unused; its
 * arguments must be pure as well for the declaration to go, so every call inside such a
 * call's arguments is marked too: they are a schema's or a route table's pieces (`Text(200)`,
 * `HttpLink()`), evaluated only to build it. A declaration made by anything else is kept.
 */
export function markPureSchemas(ts: TypeScript, fileName: string, source: string): string {
  if (!source.includes(`${ZOD_NAMESPACE}.`) && ![...PURE_BUILDERS].some((name) => source.includes(name))) return source;
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const positions: number[] = [];
  const visit = (node: TS.Node, inBuilder: boolean): void => {
    if (ts.isFunctionLike(node) || ts.isClassLike(node)) return;
    let builds = inBuilder;
    if (ts.isCallExpression(node)) {
      const { root, first } = chainRoot(ts, node);
      const zod = root?.text === ZOD_NAMESPACE && first !== undefined;
      if (zod && EFFECTFUL.has(first)) builds = false;
      else if (zod || inBuilder || (root !== undefined && first === undefined && PURE_BUILDERS.has(root.text))) builds = true;
      if (builds) positions.push(node.getStart(file));
    }
    ts.forEachChild(node, (child) => visit(child, builds));
  };
  for (const statement of file.statements) {
    const list = ts.isVariableStatement(statement) ? statement.declarationList : undefined;
    for (const declaration of list?.declarations ?? []) if (declaration.initializer) visit(declaration.initializer, false);
  }
  if (positions.length === 0) return source;
  // A chain's calls all start where it does: one annotation marks the outermost, as esbuild reads it.
  const starts = [...new Set(positions)].sort((a, b) => b - a);
  let marked = source;
  for (const at of starts) marked = marked.slice(0, at) + ANNOTATION + marked.slice(at);
  return marked;
}

/** The esbuild plugin: our own TypeScript modules (not node_modules), annotated as they load. */
export function pureSchemasPlugin(): Plugin {
  return {
    name: 'fleet-health-pure-schemas',
    setup(b) {
      // TypeScript is a build-time dependency, loaded only when a bundle is built.
      let typescript: Promise<TypeScript> | undefined;
      b.onLoad({ filter: /\.ts$/ }, async ({ path }) => {
        if (/[\\/]node_modules[\\/]/.test(path) || path.endsWith('.d.ts')) return undefined;
        const ts = await (typescript ??= import('typescript').then((m) => (m.default ?? m) as TypeScript));
        return { contents: markPureSchemas(ts, path, await readFile(path, 'utf8')), loader: 'ts' };
      });
    },
  };
}
