// Prices of LLM calls: rules/llm-pricing.yaml, with LLM_PRICING's rows
// (a JSON array of {model, input_per_mtok, output_per_mtok}) replacing or adding rows.
// Apart from the provider: a broken provider setting must not hide the cost page.
import * as z from '../zod.js';
import { defineSettings, jsonOf } from './env.js';

const PRICING_MESSAGE = 'LLM_PRICING must be a JSON array of {model, input_per_mtok, output_per_mtok}';

export const llmPricingSettings = defineSettings('llm-pricing', {
  LLM_PRICING: z.optional(
    z.pipe(z.pipe(z.string().check(z.maxLength(100_000)), z.transform(jsonOf(PRICING_MESSAGE))), z.array(z.unknown(), { error: PRICING_MESSAGE })),
  ),
});
