// The chat tools' inputs (tools.ts runs the tools): zod alone, so the build converts them to the
// JSON Schemas the model is told (tool-schemas-live.ts) without loading the tools' database,
// SQL or logging code, which read the configuration when imported.
import * as z from '../zod.js';

export const TOOL_INPUTS = {
  run_sql: z.lazy(() => z.strictObject({ sql: z.string().check(z.minLength(1), z.maxLength(5000), z.describe('One SELECT statement')) })),
  cluster_info: z.lazy(() =>
    z.strictObject({ cluster: z.string().check(z.minLength(1), z.maxLength(200), z.describe('Cluster name (or a unique part of it) or cluster id')) }),
  ),
  analyze_logs: z.lazy(() =>
    z.strictObject({
      cluster: z.string().check(z.minLength(1), z.maxLength(200), z.describe('Cluster name or id')),
      hours: z._default(z.number().check(z.gte(1), z.lte(168)), 24).check(z.describe('Window in hours, 1-168')),
      level: z._default(z.enum(['any', 'fatal', 'error', 'warn', 'info', 'debug']), 'any').check(z.describe('Only this level (any: all)')),
    }),
  ),
  search_knowledge: z.lazy(() =>
    z.strictObject({ query: z.string().check(z.minLength(1), z.maxLength(200)), limit: z._default(z.int().check(z.gte(1), z.lte(10)), 5) }),
  ),
} as const;
