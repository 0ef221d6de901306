// The JSON Schema of each chat tool's input, as the model is told it. A Lambda bundle reads
// the file the build wrote beside it (shared/bundled-json.ts), so chat and the agent and
// patrol workers carry no JSON-schema conversion (≈ 20 KB of zod compiled at every cold
// start, issue 21 §4). Running from source (the local runtime, tests) the schemas are
// converted on first use, as the build converts them.
import { bundledJson } from '../bundled-json.js';

/** The file beside a bundle: tool name → its input's JSON Schema. */
export const TOOL_SCHEMAS_FILE = 'chat-tools.json';

export type ToolInputSchemas = Record<string, Record<string, unknown>>;

/** Every tool's input schema, read (or converted) once per process. */
export const toolInputSchemas = bundledJson<ToolInputSchemas>(TOOL_SCHEMAS_FILE, async () => {
  // A specifier esbuild cannot see, so bundles never carry the conversion.
  const live = './tool-schemas-live.js';
  const { liveToolInputSchemas } = (await import(live)) as typeof import('./tool-schemas-live.js');
  return liveToolInputSchemas();
});
