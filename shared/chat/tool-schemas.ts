// The JSON Schema of each chat tool's input, as the model is told it. A Lambda bundle
// reads the file the build wrote beside it (infra/bundling.ts, emitRuntimeAssets), so
// chat and the agent and patrol workers carry no JSON-schema conversion (≈ 20 KB of
// zod compiled at every cold start, issue 21 §4). Running from source (the local
// runtime, tests) the schemas are converted on first use, as the build converts them.
import { existsSync, promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The file beside a bundle: tool name → its input's JSON Schema. */
export const TOOL_SCHEMAS_FILE = 'chat-tools.json';

export type ToolInputSchemas = Record<string, Record<string, unknown>>;

const built = join(dirname(fileURLToPath(import.meta.url)), TOOL_SCHEMAS_FILE);
let schemas: Promise<ToolInputSchemas> | undefined;

/** Every tool's input schema, read (or converted) once per process. */
export function toolInputSchemas(): Promise<ToolInputSchemas> {
  schemas ??= load().catch((error: unknown) => {
    schemas = undefined;
    throw error;
  });
  return schemas;
}

async function load(): Promise<ToolInputSchemas> {
  if (existsSync(built)) return JSON.parse(await fs.readFile(built, 'utf8')) as ToolInputSchemas;
  // A specifier esbuild cannot see, so bundles never carry the conversion; they always have the file above.
  const live = './tool-schemas-live.js';
  const { liveToolInputSchemas } = (await import(live)) as typeof import('./tool-schemas-live.js');
  return liveToolInputSchemas();
}
