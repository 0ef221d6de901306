// AI grouping of one cluster's recent alerts (issue 10): by the LLM (what
// belongs together by meaning), or, without a provider, by rules (same metric
// category, each within a time gap of the previous). Either way every alert
// lands in exactly one group: the service repairs a model answer that omits
// or repeats alerts.
import * as z from '../zod.js';
import type { AlertRecord } from '../db/alerts.js';
import { DATA_NOT_INSTRUCTIONS, recordedCall, textOf, type Ledger } from '../llm/tool-loop.js';
import type { LlmProvider } from '../llm/types.js';
import { jsonIn } from '../llm/structured.js';
import type { Severity } from '../rules/schemas.js';
import { createLogger, type Logger } from '../log.js';

let logger: Logger | undefined;
const log = () => (logger ??= createLogger('ai-issues/grouping'));

export interface AlertGroup {
  alerts: AlertRecord[];
  title: string;
  severity: Severity;
  reasoning: string;
  summary: string;
}

/** Minutes between alerts of one category that still belong together (rules grouping). */
export const RULES_GAP_MINUTES = 120;

/** The metric category an alert name points at. */
export function categoryOf(alertName: string): string {
  const n = alertName.toLowerCase();
  if (/disk|storage|space/.test(n)) return 'storage';
  if (/compaction|tablet/.test(n)) return 'compaction';
  if (/heap|jvm|memory|gc|oom/.test(n)) return 'memory';
  if (/latency|slow/.test(n)) return 'latency';
  if (/error|fail|exception/.test(n)) return 'query errors';
  if (/down|unreachable|unavailable|restart|node|replica/.test(n)) return 'availability';
  return 'other';
}

const criticalish = (a: AlertRecord) => ['critical', 'page', 'high'].includes(a.severity.toLowerCase()) || a.labels.severity?.toLowerCase() === 'critical';
const byStart = (a: AlertRecord, b: AlertRecord) => (a.starts_at < b.starts_at ? -1 : a.starts_at > b.starts_at ? 1 : a.fingerprint < b.fingerprint ? -1 : 1);

/** The longest title and texts (reasoning, summary) an AI issue keeps, from the model or the rules. */
const TITLE_MAX = 200;
const TEXT_MAX = 2000;
/**
 * The most alerts one prompt shows the model, the newest; older ones are grouped by rules, as
 * alerts the model leaves out are. A noisy week of thousands would otherwise not fit a context.
 */
export const PROMPT_ALERTS_MAX = 300;

/** The deterministic grouping: same category, each alert within RULES_GAP_MINUTES of the group's previous one. */
export function rulesGroups(alerts: readonly AlertRecord[], why = 'Rule-based grouping (no LLM provider configured)'): AlertGroup[] {
  const groups: AlertRecord[][] = [];
  const open = new Map<string, AlertRecord[]>();
  for (const a of [...alerts].sort(byStart)) {
    const category = categoryOf(a.alert_name);
    const current = open.get(category);
    if (current && Date.parse(a.starts_at) - Date.parse(current.at(-1)!.starts_at) <= RULES_GAP_MINUTES * 60_000) current.push(a);
    else {
      const group = [a];
      groups.push(group);
      open.set(category, group);
    }
  }
  return groups.map((members) => {
    const category = categoryOf(members[0]!.alert_name);
    const names = [...new Set(members.map((m) => m.alert_name))];
    return {
      alerts: members,
      // As long as the model's may be (ModelAnswer): the names are free text, up to 1,024 characters each.
      title:
        `${category[0]!.toUpperCase()}${category.slice(1)}: ${names.slice(0, 3).join(', ')}${names.length > 3 ? ` and ${names.length - 3} more` : ''}`.slice(
          0,
          TITLE_MAX,
        ),
      severity: members.some(criticalish) ? 'Critical' : 'Warning',
      reasoning: `${why}: ${members.length} ${category} alert${members.length === 1 ? '' : 's'} on this cluster, each within ${RULES_GAP_MINUTES} minutes of the previous one.`,
      summary: `${names.join(', ').slice(0, TEXT_MAX - 60)} from ${members[0]!.starts_at.slice(0, 16).replace('T', ' ')} UTC${members.some((m) => m.status === 'Firing') ? '; still firing' : '; all resolved'}.`,
    };
  });
}

const ModelAnswer = z.object({
  groups: z
    .array(
      z.object({
        alerts: z.array(z.string()).check(z.minLength(1)),
        title: z.string().check(z.minLength(1), z.maxLength(TITLE_MAX)),
        severity: z.enum(['Critical', 'Warning']),
        reasoning: z.string().check(z.minLength(1), z.maxLength(TEXT_MAX)),
        summary: z.string().check(z.minLength(1), z.maxLength(TEXT_MAX)),
      }),
    )
    .check(z.minLength(1)),
});

const SYSTEM = [
  'You group the recent alerts of one database cluster into issues: alerts that share a cause or a symptom belong together.',
  'Answer with ONLY one JSON object: {"groups":[{"alerts":["a1","a2"],"title":string,"severity":"Critical"|"Warning","reasoning":string (why these belong together),"summary":string (what is going on)}]}.',
  'Every alert id must appear in exactly one group.',
  DATA_NOT_INSTRUCTIONS,
].join('\n');

/**
 * The longest a grouping call may take, retries included, when the caller gives no deadline. A
 * pass starts clusters for up to 150 s (AI_PASS_BUDGET_MS) in a Lambda of 300 s: a call started
 * last still ends by 270 s, leaving time for the writes. Without it, 4 attempts of 60 s could run on.
 */
export const GROUPING_CALL_MS = 120_000;

/**
 * The model's grouping, repaired: unknown ids are ignored, an alert named
 * twice stays in its first group, and alerts left out are grouped by rules
 * (and say so). A model that fails or answers nothing usable → rules for all.
 */
export async function llmGroups(
  provider: LlmProvider,
  clusterName: string,
  alerts: readonly AlertRecord[],
  ledger: Ledger,
  deadline = Date.now() + GROUPING_CALL_MS,
): Promise<{ groups: AlertGroup[]; usedModel: boolean }> {
  const all = [...alerts].sort(byStart);
  const older = all.slice(0, Math.max(0, all.length - PROMPT_ALERTS_MAX));
  const sorted = all.slice(older.length);
  const ids = new Map(sorted.map((a, i) => [`a${i + 1}`, a]));
  const lines = [...ids].map(([id, a]) =>
    JSON.stringify({
      id,
      name: a.alert_name,
      severity: a.severity,
      status: a.status,
      starts_at: a.starts_at,
      ends_at: a.ends_at,
      summary: (a.detail || a.summary).slice(0, 200),
    }),
  );
  const response = await recordedCall(
    provider,
    {
      system: SYSTEM,
      messages: [{ role: 'user', content: [{ type: 'text', text: `Cluster ${clusterName}, ${sorted.length} alerts:\n${lines.join('\n')}` }] }],
      max_tokens: 4096,
      deadline,
    },
    ledger,
  );
  const parsed = ModelAnswer.safeParse(jsonIn(textOf(response.message)));
  if (!parsed.success) {
    // Cut off (max_tokens: a noisy cluster's answer outgrows the cap) or not the asked-for JSON: named in the log, since it is paid for.
    const cut = response.stop_reason === 'max_tokens';
    log().warn('LLM grouping unusable; grouped by rules', {
      cluster: clusterName,
      reason: cut ? 'cut off at max_tokens' : 'did not validate',
      alerts: sorted.length,
    });
    return {
      groups: rulesGroups(all, cut ? "Rule-based grouping (the model's answer was cut off)" : "Rule-based grouping (the model's answer did not validate)"),
      usedModel: false,
    };
  }
  const assigned = new Set<string>();
  const groups: AlertGroup[] = [];
  for (const g of parsed.data.groups) {
    const members = g.alerts.filter((id) => ids.has(id) && !assigned.has(id));
    for (const id of members) assigned.add(id);
    if (members.length)
      groups.push({ alerts: members.map((id) => ids.get(id)!), title: g.title, severity: g.severity, reasoning: g.reasoning, summary: g.summary });
  }
  const left = [...ids].filter(([id]) => !assigned.has(id)).map(([, a]) => a);
  if (left.length) groups.push(...rulesGroups(left, 'The model left these alerts out; grouped by rules'));
  if (older.length) groups.push(...rulesGroups(older, `More alerts than one prompt shows (${PROMPT_ALERTS_MAX}, the newest): the older ones grouped by rules`));
  return { groups, usedModel: true };
}
