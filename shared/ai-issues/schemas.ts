// The one definition of an AI issue as the API answers it (spec §4 AI issues):
// the rule issue's shape (shared/issues/schemas.ts) without `alert_names` and
// `ticket_unconfirmed_at` (AI issues have no create-ticket), with the AI fields. The route table wraps it in its answers; the repository's
// record (shared/db/ai-issues.ts) is derived from its inferred type.
import * as z from '../zod.js';
import { IssueSchema } from '../issues/schemas.js';

export const AiIssueSchema = z.lazy(() =>
  z.extend(z.omit(z.unlazy(IssueSchema), { alert_names: true, ticket_unconfirmed_at: true }), {
    ai_reasoning: z.string(),
    ai_summary: z.string(),
    /** `llm:<model>` or `rules`. */
    grouped_by: z.string(),
  }),
);
/** An AI issue as the API shows it. */
export type AiIssueView = z.infer<typeof AiIssueSchema>;
