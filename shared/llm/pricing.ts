// The LLM price list (rules/llm-pricing.yaml, overridable by LLM_PRICING) and
// the cost of a call. Costs are exact to the micro-dollar: tokens × price per
// million, rounded once per call.
import * as z from '../zod.js';
import { onSettingsReset, type Env } from '../config/env.js';
import { llmPricingSettings, PricingRows, type PricingRow } from '../config/llm-pricing.js';
import { shippedValue } from '../rules/defaults.js';
import type { CachedTokens } from './types.js';

export type { PricingRow } from '../config/llm-pricing.js';

/** rules/llm-pricing.yaml: the rows LLM_PRICING's are checked by (shared/config/llm-pricing.ts). */
export const PricingFile = z.lazy(() => z.strictObject({ pricing: PricingRows }));

let cached: Promise<PricingRow[]> | undefined;

/**
 * The shipped rows with LLM_PRICING's rows replacing same-model ones; by model name. LLM_PRICING's
 * rows come checked with the settings: a wrong list is the 503 naming the variable (never its
 * value) for whatever needs prices, as a wrong provider setting is, and `npm start` refuses it.
 */
export function pricingTable(env?: Env): Promise<PricingRow[]> {
  cached ??= (async () => {
    const extra = (env ? llmPricingSettings.from(env) : llmPricingSettings()).LLM_PRICING ?? [];
    const shipped = PricingFile.parse(await shippedValue('llm-pricing')).pricing;
    const rows = new Map(shipped.map((r) => [r.model, r]));
    for (const row of extra) rows.set(row.model, row);
    return [...rows.values()].sort((a, b) => (a.model < b.model ? -1 : 1));
  })().catch((error: unknown) => {
    cached = undefined;
    throw error;
  });
  return cached;
}

/** For tests that change LLM_PRICING (resetSettings() forgets it too). */
export function forgetPricing(): void {
  cached = undefined;
}
onSettingsReset(forgetPricing);

/** Bedrock's cross-region inference profiles prefix the model id (`us.anthropic.claude-…`): the stack's grants read it too. */
export const CROSS_REGION_PREFIX = /^(us|us-gov|eu|apac|ap|jp|au|ca|global)\./;
/** A Bedrock model or inference profile named by ARN: the id after `foundation-model/` or `inference-profile/`. */
const BEDROCK_ARN = /^arn:[^:]+:bedrock:[^:]*:[^:]*:(?:foundation-model|inference-profile)\/(.+)$/;
/** A dated snapshot of a model: `gpt-4o-mini-2024-07-18`, `…-20241022`. */
const DATE_SUFFIX = /-(\d{4}-\d{2}-\d{2}|\d{8})$/;

/**
 * The row for a model id: exact; else the id a Bedrock ARN names; else without a cross-region prefix;
 * else without a date suffix. Never a mere substring: `gpt-4.1-nano` is not `gpt-4.1`. An application
 * inference profile's ARN names no model: only a row of that ARN (LLM_PRICING) prices it.
 */
export function priceOf(rows: readonly PricingRow[], model: string): PricingRow | undefined {
  const byModel = new Map(rows.map((r) => [r.model, r]));
  // An ARN's model id first as it is: a geographic profile may have a row of its own (a regional premium).
  const id = BEDROCK_ARN.exec(model)?.[1] ?? model;
  const unprefixed = id.replace(CROSS_REGION_PREFIX, '');
  return byModel.get(model) ?? byModel.get(id) ?? byModel.get(unprefixed) ?? byModel.get(unprefixed.replace(DATE_SUFFIX, ''));
}

/**
 * USD, rounded to the micro-dollar; 0 for an unpriced model. `inputTokens` includes the cached
 * ones (`cached`); those are priced at the row's cache rates, or as input where it has none.
 */
export function costOf(row: PricingRow | undefined, inputTokens: number, outputTokens: number, cached: CachedTokens = {}): number {
  if (!row) return 0;
  let atInputPrice = inputTokens;
  let cacheMicro = 0;
  const read = cached.cached_input_tokens ?? 0;
  const write = cached.cache_write_input_tokens ?? 0;
  if (read && row.cached_input_per_mtok !== undefined) {
    atInputPrice -= read;
    cacheMicro += read * row.cached_input_per_mtok;
  }
  if (write && row.cache_write_input_per_mtok !== undefined) {
    atInputPrice -= write;
    cacheMicro += write * row.cache_write_input_per_mtok;
  }
  return Math.round(((atInputPrice * row.input_per_mtok + outputTokens * row.output_per_mtok + cacheMicro) / 1_000_000) * 1e6) / 1e6;
}
