// Prices of LLM calls: rules/llm-pricing.yaml, with LLM_PRICING's rows
// (a JSON array of {model, input_per_mtok, output_per_mtok} and optionally
// cached_input_per_mtok, cache_write_input_per_mtok) replacing or adding rows.
// The rows are checked here, with every other setting: a wrong price list stops
// `npm start` and is a 503 naming the variable wherever prices are read, not a
// failure of each call that needs a price.
// Apart from the provider: a broken provider setting must not hide the cost page.
import { ServiceUnavailable } from '../http/errors.js';
import * as z from '../zod.js';
import { defineSettings, jsonOf } from './env.js';

/** USD per million tokens: finite (JSON's 1e999 is Infinity), from 0 to 10,000. */
const price = () => z.number().check(z.gte(0), z.lte(10_000));

export const PricingRow = z.lazy(() =>
  z.strictObject({
    model: z.string().check(z.trim(), z.minLength(1), z.maxLength(200)),
    input_per_mtok: price(),
    output_per_mtok: price(),
    // Prompt tokens read from / written to the provider's prompt cache; without a rate, priced as input.
    cached_input_per_mtok: z.optional(price()),
    cache_write_input_per_mtok: z.optional(price()),
  }),
);
export type PricingRow = z.infer<typeof PricingRow>;

/** A price list, the shipped file's or LLM_PRICING's: at most 500 rows, each model once. */
export const PricingRows = z.lazy(() =>
  z.array(PricingRow).check(
    z.maxLength(500),
    z.refine((rows) => new Set(rows.map((r) => r.model)).size === rows.length, 'each model at most once'),
  ),
);

const PRICING_MESSAGE =
  'LLM_PRICING must be a JSON array of {model, input_per_mtok, output_per_mtok} (cached_input_per_mtok and cache_write_input_per_mtok optional)';

/** The rows, or one issue naming the first wrong row and field; never a value (a key of the operator's included). */
function pricingRows(value: unknown, ctx: z.core.ParsePayload): PricingRow[] {
  const parsed = PricingRows.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const [row, ...field] = issue.path;
  const where = row === undefined ? '' : ` (row ${String(row)}${field.length ? `, ${field.join('.')}` : ''})`;
  const reason = issue.code === 'unrecognized_keys' ? 'a field that is none of these' : issue.message;
  ctx.issues.push({ code: 'custom', message: `${PRICING_MESSAGE}${where}: ${reason}`, input: undefined });
  return z.NEVER;
}

export const llmPricingSettings = defineSettings(
  'llm-pricing',
  () => ({
    LLM_PRICING: z.optional(z.pipe(z.pipe(z.string().check(z.maxLength(100_000)), z.transform(jsonOf(PRICING_MESSAGE))), z.transform(pricingRows))),
  }),
  // As a wrong provider setting: a 503 for whatever needs prices (chat, the workers' calls, the usage reports, the scrape).
  { failure: (message) => new ServiceUnavailable(message) },
);
