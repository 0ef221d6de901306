// Loading the rule sets in force: the stored current version (its parsed form,
// validated when it was written) or the shipped default. No YAML parsing here,
// so the Lambdas that only read rules do not carry a YAML parser.
import { getCurrentRuleSet } from '../db/rules.js';
import { defaultRuleValue, type RuleSetName } from './defaults.js';
import { HealthRules, IssueRules, MetricSources, RiskRules, type ScoringRules } from './schemas.js';
import type * as z from '../zod.js';

export interface LoadedRuleSet<T> {
  version: number;
  content: string | null;
  rules: T;
}

/** Validates a rule set's parsed form and returns it as plain objects. */
function rulesFrom<S extends z.ZodMiniType>(name: RuleSetName, version: number, value: unknown, schema: S): z.output<S> {
  // Stored versions were validated when written: a failure means one was written around the API, or the schema changed.
  if (value === null) throw new Error(`${name} version ${version} has no parsed form`);
  // Without zod's generated parsers (jitless): a rule set is parsed once per version a container
  // reads, and generating them cost more than the parse (≈ 3 ms of a fresh refresh's 27).
  const parsed = schema.safeParse(value, { jitless: true });
  if (!parsed.success) throw new Error(`${name} version ${version} no longer validates: ${parsed.error.issues[0]?.message}`);
  // A plain copy: zod's output objects are markedly slower to read in the scoring
  // loop (measured: ~15% of scoring 10,000 clusters), and this is done once per load.
  return JSON.parse(JSON.stringify(parsed.data)) as z.output<S>;
}

async function load<S extends z.ZodMiniType, T>(name: RuleSetName, schema: S, pick: (value: z.output<S>) => T): Promise<LoadedRuleSet<T>> {
  const stored = await getCurrentRuleSet(name);
  const version = stored?.version ?? 0;
  const value = stored ? stored.parsed : await defaultRuleValue(name);
  return { version, content: stored?.content ?? null, rules: pick(rulesFrom(name, version, value, schema)) };
}

export const loadHealthRules = () => load('health-rules', HealthRules, (v) => v.scoring);
export const loadRiskRules = () => load('risk-rules', RiskRules, (v) => v.risk);
export const loadIssueRules = () => load('issue-rules', IssueRules, (v) => v);
/** Where the metrics puller reads (the whole parsed value: prometheus, cluster, metrics, inventory). */
export const loadMetricSources = (): Promise<LoadedRuleSet<MetricSources>> => load('metric-sources', MetricSources, (v) => v);

/** The shipped default health rules, as the loader would return them (no database). */
export const defaultHealthRules = async (): Promise<ScoringRules> => rulesFrom('health-rules', 0, await defaultRuleValue('health-rules'), HealthRules).scoring;
