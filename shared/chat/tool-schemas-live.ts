// The chat tools' input schemas converted to JSON Schema: what the build writes beside
// a bundle (infra/bundling.ts) and what tool-schemas.ts answers when running from source.
import * as z from '../zod.js';
import type { ToolInputSchemas } from './tool-schemas.js';
import { TOOL_INPUTS } from './tool-inputs.js';

export function liveToolInputSchemas(): ToolInputSchemas {
  return Object.fromEntries(
    Object.entries(TOOL_INPUTS).map(([name, input]) => {
      const json = z.toJSONSchema(input as z.ZodMiniType, { io: 'input' }) as Record<string, unknown>;
      delete json.$schema;
      return [name, json];
    }),
  );
}
