// The chat tools' input schemas converted to JSON Schema: what the build writes beside
// a bundle (infra/bundling.ts) and what tool-schemas.ts answers when running from source.
import * as z from '../zod.js';
import type { ToolInputSchemas } from './tool-schemas.js';
import { TOOLS } from './tools.js';

export function liveToolInputSchemas(): ToolInputSchemas {
  return Object.fromEntries(
    Object.entries(TOOLS).map(([name, t]) => {
      const json = z.toJSONSchema(t.input as z.ZodMiniType, { io: 'input' }) as Record<string, unknown>;
      delete json.$schema;
      return [name, json];
    }),
  );
}
