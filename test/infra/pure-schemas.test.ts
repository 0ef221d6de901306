// infra/pure-schemas.ts: a bundle leaves out the module-level zod schemas its code never uses
// (esbuild ignores zod's own @__NO_SIDE_EFFECTS__ across files), and nothing that runs for
// its effect is marked.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundlePlugins, lambdaBuildOptions, LEAN_CUTS, REPO_ROOT } from '../../infra/bundling.js';
import { markPureSchemas } from '../../infra/pure-schemas.js';

const PURE = '/* @__PURE__ */ ';
/** A module of these lines, marked, as lines. */
const markLines = (...lines: string[]) => markPureSchemas(ts, 'module.ts', lines.join('\n')).split('\n');

describe('markPureSchemas', () => {
  it('marks each zod call of a module-level initializer, a chain once, with its nested calls', () => {
    const marked = markLines(
      "import * as z from '../zod.js';",
      'export const Name = z.string().check(z.maxLength(64));',
      'export const Answer = z.lazy(() => z.object({ name: Name, count: z.int() }));',
    );
    expect(marked.slice(1)).toEqual([
      `export const Name = ${PURE}z.string().check(${PURE}z.maxLength(64));`,
      // The getter runs later: marking inside it would change nothing.
      `export const Answer = ${PURE}z.lazy(() => z.object({ name: Name, count: z.int() }));`,
    ]);
  });

  it("marks our helpers' calls inside a schema's arguments, and a route group's defineGroup with its pieces", () => {
    const marked = markLines(
      'export const Patch = z.strictObject({ notes: z.optional(Text(10_000)), link: HttpLink() });',
      'export const group = defineGroup({ name: "issues", routes: { list: { query: pageOf(20) } } });',
    );
    expect(marked).toEqual([
      `export const Patch = ${PURE}z.strictObject({ notes: ${PURE}z.optional(${PURE}Text(10_000)), link: ${PURE}HttpLink() });`,
      `export const group = ${PURE}defineGroup({ name: "issues", routes: { list: { query: ${PURE}pageOf(20) } } });`,
    ]);
  });

  it('leaves alone what runs for its effect or its answer: z.config, parses, statements, functions, other roots', () => {
    const source = [
      "import * as z from '../zod.js';",
      'z.config(en());',
      'const settings = z.parse(Settings, process.env);',
      'const checked = z.safeParse(Settings, raw);',
      'z.globalRegistry.add(Settings, { title: "x" });',
      'const registered = z.globalRegistry.add(Other, {});',
      'function build() { return z.object({}); }',
      'const made = helper(z.string());',
      'const other = y.string();',
    ].join('\n');
    const marked = markPureSchemas(ts, 'b.ts', source);
    // Only the zod call inside the helper's arguments is marked: the helper's call keeps the declaration.
    expect(marked).toBe(source.replace('helper(z.string())', `helper(${PURE}z.string())`));
  });

  it('never marks a chain that parses or registers, nor a function invoked in place; marks a chain once, at its start', () => {
    const marked = markLines(
      'export const checked = z.string().parse(process.env.X);',
      'export const registered = z.string().register(registry, { id: "x" });',
      'export const built = z.object({ at: (() => Date.now())(), name: (z.string() as Schema).check(z.trim()) });',
      'export const ratio = 1/z.number().value;',
      'export const odd = 1/z.int();',
    );
    expect(marked).toEqual([
      'export const checked = z.string().parse(process.env.X);',
      'export const registered = z.string().register(registry, { id: "x" });',
      `export const built = ${PURE}z.object({ at: (() => Date.now())(), name: ${PURE}(z.string() as Schema).check(${PURE}z.trim()) });`,
      // A call whose value is read, not called: nothing to drop.
      'export const ratio = 1/z.number().value;',
      // The comment kept apart from a `/` before it, which would make it a line comment.
      `export const odd = 1/ ${PURE}z.int();`,
    ]);
  });
});

describe('a bundle built with the plugins (infra/bundling.ts)', () => {
  let dir: string;
  const entry = (imported: string) =>
    `import { ${imported} } from ${JSON.stringify(pathToFileURL(join(REPO_ROOT, 'shared', 'routes', 'dashboard-schemas.ts')).pathname)};\n` +
    `export const check = (value) => ${imported}.safeParse(value).success;\n`;
  const bundle = async (withPlugins: boolean) => {
    const file = join(dir, 'entry.ts');
    await writeFile(file, entry('RefreshResponse'));
    const result = await build({
      ...lambdaBuildOptions(),
      entryPoints: [file],
      write: false,
      minify: false,
      logLevel: 'silent',
      plugins: withPlugins ? bundlePlugins(LEAN_CUTS) : [],
    });
    return result.outputFiles[0]!.text;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-pure-schemas-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('carries the answer it uses, and none of the module’s other answers', async () => {
    const [plain, lean] = await Promise.all([bundle(false), bundle(true)]);
    // FleetRulesResponse's fields, in the same module as RefreshResponse and used by neither bundle's code.
    expect(plain).toContain('tier_multipliers');
    expect(lean).not.toContain('tier_multipliers');
    expect(lean).toContain('clusters_scored');
    expect(lean.length).toBeLessThan(plain.length);
    // And the schema it keeps still validates.
    const out = join(dir, 'lean.mjs');
    await writeFile(out, lean);
    const { check } = (await import(pathToFileURL(out).href)) as { check: (value: unknown) => boolean };
    expect(check({ status: 'ok', clusters_scored: 3, critical: 1, warning: 0 })).toBe(true);
    expect(check({ status: 'ok', clusters_scored: -1, critical: 1, warning: 0 })).toBe(false);
  });
});
