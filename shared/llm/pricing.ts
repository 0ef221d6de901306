// The LLM price list (rules/llm-pricing.yaml, overridable by LLM_PRICING) and
// the cost of a call. Costs are exact to the micro-dollar: tokens × price per
// million, rounded once per call.
import * as z from '../zod.js';
import { ConfigError, onSettingsReset, type Env } from '../config/env.js';
import { llmPricingSettings } from '../config/llm-pricing.js';
import { ServiceUnavailable } from '../http/errors.js';
import { shippedValue } from '../rules/defaults.js';

export const PricingRow = z.lazy(() =>
  z.strictObject({
    model: z.string().check(z.trim(), z.minLength(1), z.maxLength(200)),
    input_per_mtok: z.number().check(z.gte(0), z.lte(10_000)),
    output_per_mtok: z.number().check(z.gte(0), z.lte(10_000)),
  }),
);
export type PricingRow = z.infer<typeof PricingRow>;

export const PricingFile = z.lazy(() =>
  z.strictObject({
    pricing: z.array(PricingRow).check(
      z.maxLength(500),
      z.refine((rows) => new Set(rows.map((r) => r.model)).size === rows.length, 'each model at most once'),
    ),
  }),
);

let cached: Promise<PricingRow[]> | undefined;

/** The shipped rows with LLM_PRICING's rows replacing same-model ones; by model name. */
export function pricingTable(env?: Env): Promise<PricingRow[]> {
  cached ??= (async () => {
    const shipped = PricingFile.parse(await shippedValue('llm-pricing')).pricing;
    const rows = new Map(shipped.map((r) => [r.model, r]));
    const extra = pricingOverride(env);
    if (extra) {
      const parsed = z.array(PricingRow).safeParse(extra);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const [row, ...field] = issue?.path ?? [];
        const where = row === undefined ? '' : ` (row ${String(row)}${field.length ? `, ${field.join('.')}` : ''})`;
        throw new ServiceUnavailable(`LLM_PRICING must be a JSON array of {model, input_per_mtok, output_per_mtok}${where}: ${issue?.message}.`);
      }
      for (const row of parsed.data) rows.set(row.model, row);
    }
    return [...rows.values()].sort((a, b) => (a.model < b.model ? -1 : 1));
  })().catch((error: unknown) => {
    cached = undefined;
    throw error;
  });
  return cached;
}

/**
 * LLM_PRICING's rows, unchecked. A wrong price list is the operator's to mend, like a wrong provider
 * setting: a 503 naming the variable (never its value) for whatever needs prices (chat, the
 * workers' calls, the usage reports), not a bare 500 "Internal error".
 */
function pricingOverride(env?: Env): unknown[] | undefined {
  try {
    return (env ? llmPricingSettings.from(env) : llmPricingSettings()).LLM_PRICING;
  } catch (error) {
    if (error instanceof ConfigError) throw new ServiceUnavailable(error.message);
    throw error;
  }
}

/** For tests that change LLM_PRICING (resetSettings() forgets it too). */
export function forgetPricing(): void {
  cached = undefined;
}
onSettingsReset(forgetPricing);

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
