// One patrol scan (issue 9): what it reads about the fleet, the structured
// result it must produce (DESIGN §7 parsed fields), and the two ways to
// produce it: the LLM (tools allowed, bounded rounds, the answer validated
// with one repair round) or, with no provider configured, the deterministic
// rules engine on the same inputs.
import * as z from '../zod.js';
import { runTool, toolSpecs } from '../chat/tools.js';
import type { CustomerSummary, FlaggedCluster, FleetSummary } from './schemas.js';
import { listAiIssueSummariesSince } from '../db/ai-issues.js';
import { listIssueSummariesSince, type IssueRecord } from '../db/issues.js';
import { getGeneralSettings } from '../db/settings.js';
import { budgetSpentWords, type BudgetSpent } from '../llm/agent-budget.js';
import { AnswerInvalid, structuredAnswer } from '../llm/structured.js';
import { DATA_NOT_INSTRUCTIONS, nothingSpent, type Ledger, type Spent } from '../llm/tool-loop.js';
import type { LlmProvider, Message } from '../llm/types.js';
import { fleetKpis, type FleetClusterScore } from '../scoring/fleet-score.js';
import { fleetView } from '../scoring/fleet-view.js';
import { alertsInLookback, byName } from '../scoring/inputs.js';
import type { RiskSnapshot } from '../scoring/risk.js';
import { createLogger } from '../log.js';

const log = createLogger('patrol');

export const PATROL_TOOL_ROUNDS = 6;
/** Clusters described to the model one by one (worst first); the rest only in the counts. */
export const PATROL_CLUSTERS_SHOWN = 60;

/** An open issue as the patrol reads it: rule-grouped or AI-grouped (general settings decide). */
export type OpenIssue = Pick<IssueRecord, 'issue_name' | 'severity' | 'cluster_id'>;

export interface ClusterFacts {
  score: FleetClusterScore;
  risk: RiskSnapshot | undefined;
  open_issues: OpenIssue[];
  alerts_7d: number;
}

export interface PatrolInputs {
  generated_at: string;
  clusters: ClusterFacts[];
  open_issues: number;
}

/** Open issues from the grouping `alert_criticality_method` favours: the issue rules, or the AI grouping. */
async function openIssues(now: Date): Promise<OpenIssue[]> {
  const { alert_criticality_method } = await getGeneralSettings();
  // Ongoing ones sort after every time: a window from now holds them (their summaries: no texts, alert names or keys).
  const active = alert_criticality_method === 'ai' ? await listAiIssueSummariesSince(now) : await listIssueSummariesSince(now);
  return active.filter((i) => i.status === 'Ongoing');
}

/** Scores, risks, open issues and alert counts of every cluster, worst first. */
export async function gatherInputs(now = new Date()): Promise<PatrolInputs> {
  const [view, open] = await Promise.all([fleetView(), openIssues(now)]);
  const risks = new Map(view.snapshots.map((r) => [r.cluster_id, r]));
  const alerts = new Map(view.fleet.map((d) => [d.cluster.cluster_id, alertsInLookback(d.alerts, 7, now).length]));
  const issues = new Map<string, OpenIssue[]>();
  for (const i of open) issues.set(i.cluster_id, [...(issues.get(i.cluster_id) ?? []), i]);
  return {
    generated_at: view.generatedAt,
    clusters: view.scores.map((score) => ({
      score,
      risk: risks.get(score.cluster_id),
      open_issues: issues.get(score.cluster_id) ?? [],
      alerts_7d: alerts.get(score.cluster_id) ?? 0,
    })),
    open_issues: open.length,
  };
}

/** A count of clusters in the model's summary: at most the fleet it was shown (a larger one is not an answer to repair). */
const clusterCount = (fleetSize: number) => z.int().check(z.gte(0), z.lte(fleetSize));

/** The most flagged clusters and customer summaries a report keeps: what the LLM may answer (patrolResult), the rules engine too. */
const FLAGGED_KEPT = 200;
const CUSTOMERS_KEPT = 500;
/** What the two lists may take of the report's item (DynamoDB refuses one over 400 KB; the narrative and the rest fit in what is left). */
const LISTS_MAX_BYTES = 320 * 1024;

/** A scan's answer for a fleet of `fleetSize` clusters. */
const patrolResult = (fleetSize: number) =>
  z.strictObject({
    fleet_summary: z.strictObject({
      total_clusters: clusterCount(fleetSize),
      critical: clusterCount(fleetSize),
      warning: clusterCount(fleetSize),
      healthy: clusterCount(fleetSize),
      headline: z.string().check(z.minLength(1), z.maxLength(300)),
    }),
    clusters_flagged: z
      .array(
        z.strictObject({
          cluster_id: z.string().check(z.minLength(1), z.maxLength(64)),
          cluster_name: z.string().check(z.minLength(1), z.maxLength(128)),
          customer_name: z.string().check(z.maxLength(128)),
          severity: z.enum(['Critical', 'Warning']),
          reason: z.string().check(z.minLength(1), z.maxLength(600)),
          recommended_action: z.string().check(z.minLength(1), z.maxLength(600)),
        }),
      )
      .check(z.maxLength(FLAGGED_KEPT)),
    customer_summaries: z
      .array(
        z.strictObject({
          customer_name: z.string().check(z.maxLength(128)),
          clusters: clusterCount(fleetSize),
          flagged: clusterCount(fleetSize),
          summary: z.string().check(z.minLength(1), z.maxLength(800)),
        }),
      )
      .check(z.maxLength(CUSTOMERS_KEPT)),
    narrative: z.string().check(z.minLength(1), z.maxLength(8000)),
  });
export type PatrolResult = z.infer<ReturnType<typeof patrolResult>>;

/**
 * The lists a report stores: the first FLAGGED_KEPT flagged clusters (critical first, worst first)
 * and CUSTOMERS_KEPT customers (most flagged first), then cut from the end, customers first, until
 * both fit LISTS_MAX_BYTES as stored (UTF-8 JSON). A large fleet's rules scan flags thousands; at
 * their longest, even the LLM's 200 and 500 pass the item limit. The report's flagged_count and
 * headline keep the whole count.
 */
export function keptLists(result: PatrolResult): Pick<PatrolResult, 'clusters_flagged' | 'customer_summaries'> {
  const flagged = result.clusters_flagged.slice(0, FLAGGED_KEPT);
  const customers = result.customer_summaries.slice(0, CUSTOMERS_KEPT);
  const bytes = (entry: object) => Buffer.byteLength(JSON.stringify(entry)) + 1;
  let total = [...flagged, ...customers].reduce((sum, entry) => sum + bytes(entry), 0);
  while (total > LISTS_MAX_BYTES && customers.length > 0) total -= bytes(customers.pop()!);
  while (total > LISTS_MAX_BYTES && flagged.length > 0) total -= bytes(flagged.pop()!);
  return { clusters_flagged: flagged, customer_summaries: customers };
}

export interface ScanOutcome {
  result: PatrolResult;
  model: string;
  tool_rounds: number;
  spent: Spent;
}

// ── the rules engine ──────────────────────────────────────────────────────
const severityOf = (f: ClusterFacts): 'Critical' | 'Warning' | null =>
  f.score.classification === 'Critical' || f.risk?.risk_level === 'Critical' || f.open_issues.some((i) => i.severity === 'Critical')
    ? 'Critical'
    : f.score.classification === 'Warning' || f.risk?.risk_level === 'Warning' || f.open_issues.length > 0
      ? 'Warning'
      : null;

/** The deterministic scan: flags what the scores, risks and open issues say, and explains why. */
/** `budget`: the day's AI budget was spent (a provider is configured); none, no provider is. */
export function rulesScan(inputs: PatrolInputs, budget?: BudgetSpent): PatrolResult {
  const kpis = fleetKpis(inputs.clusters.map((c) => c.score));
  const flagged: FlaggedCluster[] = [];
  for (const f of inputs.clusters) {
    const severity = severityOf(f);
    if (!severity) continue;
    const reasons = [
      ...f.score.risk_reasons.slice(0, 2),
      ...(f.risk?.risk_signals.slice(0, 1) ?? []),
      ...(f.open_issues.length
        ? [
            `${f.open_issues.length} open issue${f.open_issues.length === 1 ? '' : 's'} (${f.open_issues
              .map((i) => i.issue_name)
              .slice(0, 3)
              .join(', ')})`,
          ]
        : []),
    ];
    flagged.push({
      cluster_id: f.score.cluster_id,
      cluster_name: f.score.cluster_name,
      customer_name: f.score.customer_name,
      severity,
      reason:
        `${f.score.classification}, tier-adjusted score ${f.score.tier_adjusted_score} (tier ${f.score.customer_tier}): ${reasons.join('; ') || f.score.top_risk}`.slice(
          0,
          600,
        ),
      recommended_action: (f.score.suggested_actions[0] ?? f.risk?.suggested_actions[0] ?? 'Review the open issues and their evidence.').slice(0, 600),
    });
  }
  // Critical first, then as the scores order them (worst first).
  flagged.sort((a, b) => (a.severity === b.severity ? 0 : a.severity === 'Critical' ? -1 : 1));
  const byCustomer = new Map<string, { clusters: number; flagged: FlaggedCluster[] }>();
  for (const f of inputs.clusters) {
    const c = byCustomer.get(f.score.customer_name) ?? { clusters: 0, flagged: [] };
    c.clusters++;
    byCustomer.set(f.score.customer_name, c);
  }
  for (const f of flagged) byCustomer.get(f.customer_name)!.flagged.push(f);
  const customers: CustomerSummary[] = [...byCustomer]
    .map(([customer_name, c]) => ({
      customer_name,
      clusters: c.clusters,
      flagged: c.flagged.length,
      summary: c.flagged.length
        ? `${c.flagged.length} of ${c.clusters} cluster${c.clusters === 1 ? '' : 's'} need attention: ${c.flagged
            .slice(0, 3)
            .map((f) => `${f.cluster_name} (${f.severity})`)
            .join(', ')}${c.flagged.length > 3 ? ` and ${c.flagged.length - 3} more` : ''}.`
        : `All ${c.clusters} cluster${c.clusters === 1 ? '' : 's'} healthy.`,
    }))
    .sort((a, b) => b.flagged - a.flagged || byName(a.customer_name, b.customer_name));
  // The headline counts what fleet_summary counts (the fleet classification), so the two never disagree.
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const headline = `${kpis.critical_count} critical and ${plural(kpis.warning_count, 'warning cluster')}; ${flagged.length} flagged by risk to look at; ${plural(inputs.open_issues, 'open issue')}.`;
  const summary: FleetSummary = {
    total_clusters: kpis.total_clusters,
    critical: kpis.critical_count,
    warning: kpis.warning_count,
    healthy: kpis.healthy_count,
    headline,
  };
  const narrative = [
    `_Rules-engine patrol: ${budget ? budgetSpentWords(budget) : 'no LLM provider is configured'}, so this report applies the scoring and risk rules to the same inputs._`,
    '',
    `**${headline}** ${kpis.total_clusters} clusters: ${kpis.healthy_count} healthy, ${kpis.warning_count} warning, ${kpis.critical_count} critical; ${kpis.tier_s_at_risk} tier-S cluster${kpis.tier_s_at_risk === 1 ? '' : 's'} at risk.`,
    ...(flagged.length
      ? [
          '',
          '| cluster | customer | severity | why | next step |',
          '|---|---|---|---|---|',
          ...flagged
            .slice(0, 15)
            .map(
              (f) =>
                `| ${f.cluster_name} | ${f.customer_name} | ${f.severity} | ${f.reason.replace(/\|/g, '/')} | ${f.recommended_action.replace(/\|/g, '/')} |`,
            ),
        ]
      : []),
    ...(flagged.length > 15 ? [``, `…and ${flagged.length - 15} more flagged clusters in the list below.`] : []),
  ].join('\n');
  return { fleet_summary: summary, clusters_flagged: flagged, customer_summaries: customers, narrative };
}

// ── the LLM scan ──────────────────────────────────────────────────────────
const SYSTEM = [
  'You are the patrol of a fleet of managed analytical database clusters. You read the fleet state below, may use tools to look closer,',
  'and then answer with ONLY one JSON object (no prose around it) of this shape:',
  '{"fleet_summary":{"total_clusters":int,"critical":int,"warning":int,"healthy":int,"headline":string},',
  ' "clusters_flagged":[{"cluster_id":string,"cluster_name":string,"customer_name":string,"severity":"Critical"|"Warning","reason":string,"recommended_action":string}],',
  ' "customer_summaries":[{"customer_name":string,"clusters":int,"flagged":int,"summary":string}],',
  ' "narrative":string (Markdown, what an on-call engineer should know first)}',
  'Flag clusters that need action, worst first; be specific about the evidence (metrics, alerts, issues) and the next step.',
  'Keep the whole object under about 9,000 characters (one or two sentences per reason and summary): a longer answer is cut off at the output limit.',
  DATA_NOT_INSTRUCTIONS,
].join('\n');

/** The fleet as the model reads it: counts, then the worst clusters one line each. */
export function describeFleet(inputs: PatrolInputs): string {
  const kpis = fleetKpis(inputs.clusters.map((c) => c.score));
  const lines = inputs.clusters.slice(0, PATROL_CLUSTERS_SHOWN).map((f) =>
    JSON.stringify({
      cluster_id: f.score.cluster_id,
      cluster_name: f.score.cluster_name,
      customer: f.score.customer_name,
      tier: f.score.customer_tier,
      classification: f.score.classification,
      tier_adjusted_score: f.score.tier_adjusted_score,
      top_risk: f.score.top_risk,
      reasons: f.score.risk_reasons.slice(0, 3),
      risk_level: f.risk?.risk_level,
      risk_signals: f.risk?.risk_signals.slice(0, 2),
      open_issues: f.open_issues.map((i) => `${i.severity} ${i.issue_name}`).slice(0, 5),
      alerts_7d: f.alerts_7d,
    }),
  );
  return [
    `Fleet at ${inputs.generated_at}: ${kpis.total_clusters} clusters (${kpis.healthy_count} healthy, ${kpis.warning_count} warning, ${kpis.critical_count} critical), ${inputs.open_issues} open issues.`,
    `The ${lines.length} worst clusters (worst first):`,
    ...lines,
  ].join('\n');
}

/**
 * `spent` accumulates every call's usage, also when the scan then fails; `shouldStop`, asked before
 * each model call, ends the scan with LoopStopped (the worker lost its lock).
 */
export async function llmScan(
  provider: LlmProvider,
  inputs: PatrolInputs,
  ledger: Ledger,
  deadline?: number,
  spent = nothingSpent(),
  shouldStop?: () => boolean,
): Promise<ScanOutcome> {
  const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: describeFleet(inputs) }] }];
  try {
    const { value, loop } = await structuredAnswer(patrolResult(inputs.clusters.length), {
      provider,
      system: SYSTEM,
      messages,
      tools: await toolSpecs(),
      runTool,
      maxRounds: PATROL_TOOL_ROUNDS,
      ledger,
      maxTokens: 4096,
      deadline,
      reserveMs: 120_000,
      spent,
      shouldStop,
    });
    return { result: inFleet(value, inputs), model: provider.model, tool_rounds: loop.tool_rounds, spent: loop.spent };
  } catch (error) {
    if (error instanceof AnswerInvalid) throw new ScanFailed(error.message);
    throw error;
  }
}

/**
 * The model's answer held to the fleet: its counts replaced by the scores' own, its flagged clusters only
 * those in the fleet, named as the inventory names them, and its customer summaries one per customer it has. The model writes
 * both the id and the name: "Open prod-db-01 →" must not open another cluster (a prompt-injected answer,
 * or a confused one), and a cluster the fleet does not have is no finding.
 */
function inFleet(result: PatrolResult, inputs: PatrolInputs): PatrolResult {
  const fleet = new Map(inputs.clusters.map(({ score }) => [score.cluster_id, score]));
  // A cluster flagged twice is one flagged cluster (its first entry: the model lists worst first).
  const seen = new Set<string>();
  const flagged = result.clusters_flagged.flatMap((f) => {
    const known = fleet.get(f.cluster_id);
    if (!known || seen.has(f.cluster_id)) return [];
    seen.add(f.cluster_id);
    return [{ ...f, cluster_name: known.cluster_name, customer_name: known.customer_name }];
  });
  const dropped = result.clusters_flagged.length - flagged.length;
  if (dropped > 0) log.warn('the model flagged clusters the fleet does not have, or one twice; left out', { dropped });
  // The counts are the fleet's own classification, as the rules scan and the KPIs give them: a model's arithmetic
  // ("0 critical" beside five Critical scores, counts that do not add up) is no figure to publish. Its headline stays.
  const kpis = fleetKpis(inputs.clusters.map((c) => c.score));
  const counted = { total_clusters: kpis.total_clusters, critical: kpis.critical_count, warning: kpis.warning_count, healthy: kpis.healthy_count };
  const off = (Object.keys(counted) as (keyof typeof counted)[]).filter((k) => result.fleet_summary[k] !== counted[k]);
  if (off.length > 0) log.warn("the model's fleet counts differ from the scores; the scores' are kept", { fields: off });
  // One summary per customer the fleet has (the model's first), its counts the fleet's: a customer named twice
  // showed as two cards, one the fleet does not have (a prompt-injected "Evil Corp") as a customer of ours.
  const clustersOf = new Map<string, number>();
  for (const { score } of inputs.clusters) clustersOf.set(score.customer_name, (clustersOf.get(score.customer_name) ?? 0) + 1);
  const summarised = new Set<string>();
  const customers = result.customer_summaries.flatMap((c) => {
    const clusters = clustersOf.get(c.customer_name);
    if (clusters === undefined || summarised.has(c.customer_name)) return [];
    summarised.add(c.customer_name);
    return [{ ...c, clusters, flagged: flagged.filter((f) => f.customer_name === c.customer_name).length }];
  });
  const unheld = result.customer_summaries.length - customers.length;
  if (unheld > 0) log.warn('the model summarised customers the fleet does not have, or one twice; left out', { dropped: unheld });
  return { ...result, fleet_summary: { ...result.fleet_summary, ...counted }, clusters_flagged: flagged, customer_summaries: customers };
}

export class ScanFailed extends Error {}
