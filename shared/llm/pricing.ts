// The LLM price list (rules/llm-pricing.yaml, overridable by LLM_PRICING) and
// the cost of a call. Costs are exact to the micro-dollar: tokens × price per
// million, rounded once per call.
import * as z from 'zod';
import { shippedValue } from '../rules/defaults.js';

export const PricingRow = z.strictObject({
  model: z.string().trim().min(1).max(200),
  input_per_mtok: z.number().finite().min(0).max(10_000),
  output_per_mtok: z.number().finite().min(0).max(10_000),
});
export type PricingRow = z.infer<typeof PricingRow>;

export const PricingFile = z.strictObject({
  pricing: z
    .array(PricingRow)
    .max(500)
    .refine((rows) => new Set(rows.map((r) => r.model)).size === rows.length, 'each model at most once'),
});

let cached: Promise<PricingRow[]> | undefined;

/** The shipped rows with LLM_PRICING's rows replacing same-model ones; by model name. */
export function pricingTable(env: NodeJS.ProcessEnv = process.env): Promise<PricingRow[]> {
  cached ??= (async () => {
    const shipped = PricingFile.parse(await shippedValue('llm-pricing')).pricing;
    const rows = new Map(shipped.map((r) => [r.model, r]));
    if (env.LLM_PRICING?.trim()) {
      let extra: unknown;
      try {
        extra = JSON.parse(env.LLM_PRICING);
      } catch {
        throw new Error('LLM_PRICING must be a JSON array of {model, input_per_mtok, output_per_mtok}');
      }
      for (const row of z.array(PricingRow).parse(extra)) rows.set(row.model, row);
    }
    return [...rows.values()].sort((a, b) => (a.model < b.model ? -1 : 1));
  })().catch((error: unknown) => {
    cached = undefined;
    throw error;
  });
  return cached;
}

/** For tests that change LLM_PRICING. */
export function forgetPricing(): void {
  cached = undefined;
}

/** Bedrock's cross-region inference profiles prefix the model id: `us.`, `eu.`, `apac.`, `global.`, `us-gov.`. */
const REGION_PREFIX = /^(us|eu|apac|global|us-gov|jp|ca)\./;
/** A dated snapshot of a model: `gpt-4o-mini-2024-07-18`, `…-20241022`. */
const DATE_SUFFIX = /-(\d{4}-\d{2}-\d{2}|\d{8})$/;

/**
 * The row for a model id: exact; else without a cross-region prefix; else
 * without a date suffix. Never a mere substring: `gpt-4.1-nano` is not `gpt-4.1`.
 */
export function priceOf(rows: readonly PricingRow[], model: string): PricingRow | undefined {
  const byModel = new Map(rows.map((r) => [r.model, r]));
  const unprefixed = model.replace(REGION_PREFIX, '');
  return byModel.get(model) ?? byModel.get(unprefixed) ?? byModel.get(unprefixed.replace(DATE_SUFFIX, ''));
}

/** USD, rounded to the micro-dollar; 0 for an unpriced model. */
export function costOf(row: PricingRow | undefined, inputTokens: number, outputTokens: number): number {
  if (!row) return 0;
  return Math.round(((inputTokens * row.input_per_mtok + outputTokens * row.output_per_mtok) / 1_000_000) * 1e6) / 1e6;
}
