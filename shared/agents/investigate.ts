// Investigating one cluster for an agent task (issue 10). With an LLM provider:
// the tool loop over the chat tools (SQL, cluster_info, analyze_logs,
// search_knowledge), bounded rounds, a final JSON answer validated with zod and
// one repair round, every call in the usage ledger (source `agent`, run id =
// investigation id). Without one: a rules-based investigation from the
// cluster's scores, risk snapshot and the runbooks, with an honest low
// confidence, model `rules` and cost 0 (DESIGN §10); so too once the day's AI
// budget is spent (shared/llm/agent-budget.ts), saying so.
import * as z from '../zod.js';
import { INVESTIGATION_ANSWER_RESERVE_SECONDS } from '../config/agents.js';
import { runTool, toolSpecs } from '../chat/tools.js';
import type { AgentTask, Investigation, Severity } from '../db/investigations.js';
import { searchKnowledge, type KnowledgeHit } from '../knowledge/search.js';
import { agentProvider, budgetSpentWords, type BudgetSpent } from '../llm/agent-budget.js';
import { DATA_NOT_INSTRUCTIONS, nothingSpent, type Ledger, type Spent } from '../llm/tool-loop.js';
import type { LlmProvider, Message } from '../llm/types.js';
import { AnswerInvalid, structuredAnswer } from '../llm/structured.js';
import type { FleetClusterScore } from '../scoring/fleet-score.js';
import { fleetView } from '../scoring/fleet-view.js';
import type { RiskSnapshot } from '../scoring/risk.js';

export const INVESTIGATION_TOOL_ROUNDS = 8;
/** The confidence a rules-based investigation claims: it names breached thresholds, not a confirmed cause. */
export const RULES_CONFIDENCE = { withThresholds: 0.4, without: 0.3 } as const;

/** An investigation that could not be made; `retryable` false when another attempt cannot help. */
export class InvestigationFailed extends Error {
  constructor(
    message: string,
    readonly retryable = true,
  ) {
    super(message);
  }
}

/** The task's cluster left the fleet (decommissioned, or gone from the inventory): the task ends, and nobody has anything to fix. */
export class ClusterLeftFleet extends InvestigationFailed {
  constructor(task: Pick<AgentTask, 'cluster_id' | 'cluster_name'>) {
    super(`cluster ${task.cluster_name} (${task.cluster_id}) is no longer in the fleet`, false);
  }
}

export interface ClusterFacts {
  task: AgentTask;
  score: FleetClusterScore;
  risk: RiskSnapshot | undefined;
}

/** What the investigation concluded and what it cost. */
export interface Findings {
  severity: Severity;
  confidence: number;
  root_cause: string;
  recommended_actions: string;
  full_report: string;
  model: string;
  spent: Spent;
  tool_rounds: number;
}

const lowercase = (v: unknown) => (typeof v === 'string' ? v.trim().toLowerCase() : v);

/** The model's final answer. Tolerated: `Critical` for `critical`, and actions as a list of strings (made a Markdown list). */
export const InvestigationAnswer = z.object({
  severity: z.preprocess(lowercase, z.enum(['critical', 'warning', 'info'])),
  // To three decimals: all a confidence says, and a number DynamoDB stores (it refuses 1e-200).
  confidence: z.pipe(
    z.number().check(z.gte(0), z.lte(1)),
    z.transform((c: number) => Math.round(c * 1000) / 1000),
  ),
  root_cause: z.string().check(z.trim(), z.minLength(1), z.maxLength(4000)),
  recommended_actions: z.union([
    z.string().check(z.trim(), z.minLength(1), z.maxLength(8000)),
    // The list made text is held to the text's 8,000 characters too (30 items of 1,000 made 30,090).
    z.pipe(
      z.pipe(
        z.array(z.string().check(z.trim(), z.minLength(1), z.maxLength(1000))).check(z.minLength(1), z.maxLength(30)),
        z.transform((items: string[]) => items.map((a) => `- ${a}`).join('\n')),
      ),
      z.string().check(z.maxLength(8000)),
    ),
  ]),
  full_report: z.string().check(z.trim(), z.minLength(1), z.maxLength(100_000)),
});
export type InvestigationAnswer = z.infer<typeof InvestigationAnswer>;

/** The cluster's current score and risk snapshot; not retryable when the cluster left the fleet. */
export async function clusterFacts(task: AgentTask): Promise<ClusterFacts> {
  const view = await fleetView();
  const score = view.scores.find((s) => s.cluster_id === task.cluster_id);
  if (!score) throw new ClusterLeftFleet(task);
  return { task, score, risk: view.snapshots.find((r) => r.cluster_id === task.cluster_id) };
}

/**
 * Investigates the task's cluster: the LLM when a provider is configured, else the rules. `spent` accumulates
 * this attempt's model calls, so a caller knows them when it throws. The investigation's tokens and cost are the
 * task's, its failed attempts' included (the ledger charged them all).
 */
export async function investigate(task: AgentTask, options: { investigationId: string; deadline?: number; spent?: Spent }): Promise<Investigation> {
  const started = Date.now();
  const facts = await clusterFacts(task);
  const { provider, spent } = await agentProvider();
  const findings = provider
    ? await llmInvestigation(provider, facts, { runId: options.investigationId, source: 'agent', user: 'agent-worker' }, options.deadline, options.spent)
    : await rulesInvestigation(facts, spent);
  const earlierIn = task.spent_input_tokens ?? 0;
  const earlierOut = task.spent_output_tokens ?? 0;
  return {
    investigation_id: options.investigationId,
    task_id: task.task_id,
    cluster_id: task.cluster_id,
    cluster_name: facts.score.cluster_name,
    customer_name: facts.score.customer_name,
    severity: findings.severity,
    confidence: findings.confidence,
    root_cause: findings.root_cause,
    recommended_actions: findings.recommended_actions,
    full_report: findings.full_report,
    model: findings.model,
    input_tokens: findings.spent.input_tokens + earlierIn,
    output_tokens: findings.spent.output_tokens + earlierOut,
    total_tokens: findings.spent.total_tokens + earlierIn + earlierOut,
    cost_usd: Math.round((findings.spent.cost_usd + (task.spent_cost_usd ?? 0)) * 1e6) / 1e6,
    duration_seconds: Math.round((Date.now() - started) / 100) / 10,
    created_at: new Date().toISOString(),
  };
}

// ── rules-based ───────────────────────────────────────────────────────────
const SEVERITY: Record<FleetClusterScore['classification'], Severity> = { Critical: 'critical', Warning: 'warning', Healthy: 'info' };
const cell = (s: string) => s.replace(/\|/g, '/').replace(/\n/g, ' ');

/** The runbook best matching each of the worst dimensions (or risk signals), one hit per runbook. */
async function matchingRunbooks(facts: ClusterFacts): Promise<KnowledgeHit[]> {
  const worst = facts.score.dimension_scores
    .filter((d) => d.status !== 'healthy')
    .sort((a, b) => a.score - b.score)
    .map((d) => d.name);
  const queries = (
    worst.length
      ? worst
      : Object.entries(facts.risk?.metrics ?? {})
          .filter(([, m]) => m.status !== 'healthy')
          .map(([key]) => key.replace(/_/g, ' '))
  ).slice(0, 3);
  const hits = new Map<string, KnowledgeHit>();
  for (const query of queries) {
    const [best] = await searchKnowledge(query, 1);
    if (best && !hits.has(best.file)) hits.set(best.file, best);
  }
  return [...hits.values()];
}

/** A score as the console writes it: 41 → `41.0`. */
const oneDecimal = (score: number) => score.toFixed(1);

/** `budget`: the day's AI budget was spent (a provider is configured); none, no provider is. */
export async function rulesInvestigation(facts: ClusterFacts, budget?: BudgetSpent): Promise<Findings> {
  const { score, risk, task } = facts;
  const thresholds = score.risk_reasons;
  const signals = risk?.risk_signals ?? [];
  const runbooks = await matchingRunbooks(facts);
  const breached = score.dimension_scores.some((d) => d.status !== 'healthy') || signals.length > 0;
  const confidence = breached ? RULES_CONFIDENCE.withThresholds : RULES_CONFIDENCE.without;
  const actions = [...new Set([...score.suggested_actions, ...(risk?.suggested_actions ?? [])])];
  const recommended = [
    ...(actions.length ? actions : ["Review the cluster's open issues and recent alerts; no rule suggests a specific action."]).map((a) => `- ${a}`),
    ...runbooks.map((r) => `- Follow the runbook "${r.title}" (${r.file}, section ${r.section}).`),
  ].join('\n');
  const primary = thresholds[0] ?? signals[0];
  const count = thresholds.length + signals.length;
  const rootCause = primary
    ? `Rule-based finding, not a confirmed cause: ${primary}${count > 1 ? ` (the first of ${count} breached thresholds and risk signals)` : ''}.`
    : `Rule-based finding: the tier-adjusted score ${score.tier_adjusted_score} is low without a single breached threshold; the alerts and issues need a closer look.`;
  const report = [
    `# Investigation: ${score.cluster_name} (${score.customer_name}, tier ${score.customer_tier})`,
    '',
    `_Rule-based investigation: ${budget ? budgetSpentWords(budget) : 'no LLM provider is configured'}, so this report applies the scoring and risk rules and the runbooks to the cluster. It names what crossed a threshold, not a confirmed root cause: confidence ${confidence}._`,
    '',
    `**Why it was investigated:** ${task.trigger_reason}`,
    '',
    '## Scores',
    // A header row of its own words: an empty one showed as a blank strip above the table. Scores with one decimal, as the console writes them.
    '| Score | Value |',
    '|---|---|',
    `| Classification | ${score.classification} |`,
    `| Tier-adjusted score | ${oneDecimal(score.tier_adjusted_score)} |`,
    `| Overall / metrics / alerts score | ${oneDecimal(score.overall_score)} / ${oneDecimal(score.metrics_score)} / ${oneDecimal(score.alerts_score)} |`,
    `| Top risk | ${cell(score.top_risk)} |`,
    `| Alerts fired in the last 7 days (still firing or resolved) | ${score.firing_alert_count_7d} |`,
    '',
    '## Breached thresholds',
    ...(thresholds.length ? thresholds.map((t) => `- ${t}`) : ['- None of the scoring dimensions is off green.']),
    '',
    `## Risk signals (risk level ${risk?.risk_level ?? 'unknown'})`,
    ...(signals.length ? signals.map((s) => `- ${s}`) : ['- None.']),
    '',
    '## Matching runbooks',
    ...(runbooks.length
      ? runbooks.map((r) => `- **${r.title}** (\`${r.file}\`, ${r.section}): ${r.excerpt}`)
      : ['- No runbook matches the breached thresholds.']),
    '',
    '## Recommended actions',
    recommended,
  ].join('\n');
  return {
    severity: SEVERITY[score.classification],
    confidence,
    root_cause: rootCause,
    recommended_actions: recommended,
    full_report: report,
    model: 'rules',
    spent: nothingSpent(),
    tool_rounds: 0,
  };
}

// ── with the LLM ──────────────────────────────────────────────────────────
const SYSTEM = [
  'You are an on-call reliability engineer investigating one managed analytical database cluster that the health rules flagged.',
  'Use the tools to find what is wrong and why: cluster_info (scores, risk, open issues), run_sql (metric history, alerts, issues),',
  'analyze_logs (error signatures) and search_knowledge (the runbooks). Then answer with ONLY one JSON object (no prose around it):',
  '{"severity":"critical"|"warning"|"info", "confidence":number from 0 to 1 (how sure you are of the root cause),',
  ' "root_cause":string (one or two sentences), "recommended_actions":string (a Markdown list, most urgent first),',
  ' "full_report":string (Markdown: the evidence you found, the root cause, the actions, what to watch next)}',
  'Keep the whole object under about 9,000 characters (full_report under about 6,000): a longer answer is cut off at the output limit.',
  DATA_NOT_INSTRUCTIONS,
].join('\n');

/** The cluster as the model first reads it. */
export function describeCluster({ task, score, risk }: ClusterFacts): string {
  return [
    `Investigate cluster ${score.cluster_name} (id ${score.cluster_id}) of ${score.customer_name}, tier ${score.customer_tier}.`,
    `Why: ${task.trigger_reason}`,
    'What the rules see:',
    JSON.stringify({
      classification: score.classification,
      tier_adjusted_score: score.tier_adjusted_score,
      overall_score: score.overall_score,
      metrics_score: score.metrics_score,
      alerts_score: score.alerts_score,
      top_risk: score.top_risk,
      risk_reasons: score.risk_reasons,
      suggested_actions: score.suggested_actions,
      firing_alerts_7d: score.firing_alert_count_7d,
      metrics: score.metrics,
      cluster_type: score.cluster_type,
      region: score.region,
      risk_level: risk?.risk_level,
      risk_signals: risk?.risk_signals,
    }),
  ].join('\n');
}

/** The tool loop, then the answer validated, with one repair round (shared/llm/structured.ts). */
export async function llmInvestigation(provider: LlmProvider, facts: ClusterFacts, ledger: Ledger, deadline?: number, spent?: Spent): Promise<Findings> {
  const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: describeCluster(facts) }] }];
  try {
    const { value, loop } = await structuredAnswer(InvestigationAnswer, {
      provider,
      system: SYSTEM,
      messages,
      tools: await toolSpecs(),
      runTool,
      maxRounds: INVESTIGATION_TOOL_ROUNDS,
      ledger,
      maxTokens: 4096,
      deadline,
      reserveMs: INVESTIGATION_ANSWER_RESERVE_SECONDS * 1000,
      ...(spent ? { spent } : {}),
    });
    return { ...value, model: provider.model, spent: loop.spent, tool_rounds: loop.tool_rounds };
  } catch (error) {
    if (error instanceof AnswerInvalid) throw new InvestigationFailed(error.message);
    throw error;
  }
}
