// One file per cold start: a function's entry and the chunks it imports statically, joined
// after esbuild's code splitting (infra/README.md, "Code splitting"). esbuild puts the code an
// entry shares with each set of its dynamic imports in a chunk of its own, so settings' cold
// start loaded 9 files; each costs the runtime's ESM loader a resolve, a read, a compile and a
// link (joined, settings' Init fell by 0.07× a hello-world's under the Lambda runtime).
// Joined, the entry also exports what the on-demand chunks import from those chunks, and the
// on-demand chunks import it from the entry: one instance of every module, as before.
import { renameSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { build, type BuildOptions, type Metafile, type Plugin } from 'esbuild';

const VIRTUAL = 'fleet-health-eager-join';

/**
 * Joins `entry` (an output path relative to `root`, e.g. `dist/functions/settings/index.mjs`)
 * with the chunks it imports statically, in place, and updates `metafile` to match: the entry
 * holds those chunks' inputs, they are gone, and the on-demand chunks import the entry.
 * `eager` is the entry and those chunks (`coldStartFiles`), `lazy` the other chunks.
 * esbuild chains the first pass's source maps into the second's.
 */
export async function joinEagerChunks(
  metafile: Metafile,
  root: string,
  { entry, eager, lazy }: { entry: string; eager: readonly string[]; lazy: readonly string[] },
  /** The first pass's options that shape code (platform, format, target, minify, source maps), without its banner: the joined files keep their own. */
  pass: BuildOptions,
): Promise<void> {
  const chunks = eager.filter((file) => file !== entry);
  if (chunks.length === 0) return;
  const dir = dirname(resolve(root, entry));
  // The same depth as the function's folder, so the maps' relative source paths stay right when moved.
  const staging = `${dir}.joining`;
  const entryName = basename(entry);
  // Each export of a joined chunk, under a name of its own on the entry.
  const aliases = new Map<string, Map<string, string>>();
  let next = 0;
  for (const chunk of chunks) aliases.set(basename(chunk), new Map(metafile.outputs[chunk]!.exports.map((name) => [name, `__e${(next++).toString(36)}`])));
  const reexports = [...aliases].map(([file, names]) => `export { ${[...names].map(([name, alias]) => `${name} as ${alias}`).join(', ')} } from './${file}';`);

  // What the joined code imports and is not joined stays a file of its own (an on-demand chunk; built-ins are external anyway).
  const joinedFiles = new Set([entryName, ...aliases.keys()]);
  const keepOthers: Plugin = {
    name: VIRTUAL,
    setup(b) {
      b.onResolve({ filter: /^\.\/.*\.mjs$/ }, ({ path }) => (joinedFiles.has(basename(path)) ? undefined : { path, external: true }));
    },
  };
  // In an on-demand chunk, a joined chunk becomes a module that takes the same exports from the entry.
  const fromEntry: Plugin = {
    name: `${VIRTUAL}-from-entry`,
    setup(b) {
      b.onResolve({ filter: /^\.\/.*\.mjs$/ }, ({ path }) =>
        aliases.has(basename(path)) ? { path: basename(path), namespace: VIRTUAL } : { path, external: true },
      );
      b.onLoad({ filter: /.*/, namespace: VIRTUAL }, ({ path }) => ({
        contents: `export { ${[...aliases.get(path)!].map(([name, alias]) => `${alias} as ${name}`).join(', ')} } from './${entryName}';`,
        resolveDir: dir,
        loader: 'js',
      }));
    },
  };

  rmSync(staging, { recursive: true, force: true });
  try {
    const joined = await build({
      ...pass,
      bundle: true,
      logLevel: 'warning',
      stdin: { contents: [`export * from './${entryName}';`, ...reexports].join('\n'), resolveDir: dir, sourcefile: `${entryName}.joined`, loader: 'js' },
      outfile: join(staging, entryName),
      plugins: [keepOthers],
      metafile: true,
    });
    // The on-demand chunks that import a joined chunk take the same exports from the entry instead.
    const importers = lazy.filter((file) => metafile.outputs[file]!.imports.some((imported) => chunks.includes(imported.path)));
    const rewritten = importers.length
      ? await build({
          ...pass,
          bundle: true,
          logLevel: 'warning',
          entryPoints: importers.map((file) => resolve(root, file)),
          outdir: staging,
          entryNames: '[name]',
          outExtension: { '.js': '.mjs' },
          metafile: true,
          plugins: [fromEntry],
        })
      : undefined;

    // Into place: the joined entry and rewritten chunks (with their maps), the joined chunks gone.
    for (const chunk of chunks) for (const file of [chunk, `${chunk}.map`]) rmSync(resolve(root, file), { force: true });
    for (const file of [entryName, ...importers.map((f) => basename(f))])
      for (const name of [file, `${file}.map`]) renameSync(join(staging, name), join(dir, name));

    // The metafile as if esbuild had written it so.
    const outputOf = (meta: Metafile, name: string) => Object.entries(meta.outputs).find(([file]) => file.endsWith(`/${name}`))![1];
    const entryOutput = metafile.outputs[entry]!;
    const inputs = Object.assign({}, ...[entry, ...chunks].map((file) => metafile.outputs[file]!.inputs)) as typeof entryOutput.inputs;
    metafile.outputs[entry] = {
      ...entryOutput,
      bytes: outputOf(joined.metafile!, entryName).bytes,
      inputs,
      imports: [...entryOutput.imports, ...chunks.flatMap((chunk) => metafile.outputs[chunk]!.imports)].filter(
        (imported, i, all) => !chunks.includes(imported.path) && all.findIndex((other) => other.path === imported.path && other.kind === imported.kind) === i,
      ),
    };
    for (const file of importers) {
      const output = metafile.outputs[file]!;
      const imports = output.imports.filter((imported) => !chunks.includes(imported.path));
      metafile.outputs[file] = {
        ...output,
        bytes: outputOf(rewritten!.metafile!, basename(file)).bytes,
        imports: [...imports, { path: entry, kind: 'import-statement' }],
      };
    }
    for (const chunk of chunks) {
      delete metafile.outputs[chunk];
      delete metafile.outputs[`${chunk}.map`];
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
