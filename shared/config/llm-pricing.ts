// Prices of LLM calls: rules/llm-pricing.yaml, with LLM_PRICING's rows
// (a JSON array of {model, input_per_mtok, output_per_mtok}) replacing or adding rows.
// Apart from the provider: a broken provider setting must not hide the cost page.
import * as z from 'zod';
import { defineSettings } from './env.js';

export const llmPricingSettings = defineSettings('llm-pricing', {
  LLM_PRICING: z
    .string()
    .max(100_000)
    .transform((raw, ctx) => {
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'LLM_PRICING must be a JSON array of {model, input_per_mtok, output_per_mtok}' });
        return z.NEVER;
      }
    })
    .pipe(z.array(z.unknown(), { error: 'LLM_PRICING must be a JSON array of {model, input_per_mtok, output_per_mtok}' }))
    .optional(),
});
