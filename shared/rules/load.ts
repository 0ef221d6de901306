// Parsing and loading rule sets. YAML is parsed with alias limits (no
// billion-laughs), must be a mapping with the rule set's top-level key, and must
// pass the rule set's full schema; errors say where (line and column, or path).
import { parseDocument } from 'yaml';
import type * as z from 'zod';
import { getCurrentRuleSet } from '../db/rules.js';
import { defaultRuleText, type RuleSetName } from './defaults.js';
import { HealthRules, RiskRules, type RiskRuleSet, type ScoringRules } from './schemas.js';

/** Top-level key each rule set must have (the issue rules have none). */
export const TOP_KEY: Record<RuleSetName, string | null> = { 'health-rules': 'scoring', 'issue-rules': null, 'risk-rules': 'risk' };
const SCHEMAS: Partial<Record<RuleSetName, z.ZodType>> = { 'health-rules': HealthRules, 'risk-rules': RiskRules };

export type RuleCheck = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/** Checks a rule set's YAML text. `message` says what is wrong and where. */
export function checkRuleText(name: RuleSetName, text: string, schema = SCHEMAS[name]): RuleCheck {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const error = doc.errors[0];
  if (error) {
    const at = error.linePos?.[0];
    return { ok: false, message: `invalid YAML${at ? ` at line ${at.line}, column ${at.col}` : ''}: ${error.message.split('\n')[0]}` };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 50 });
  } catch (e) {
    return { ok: false, message: `invalid YAML: ${(e as Error).message}` };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { ok: false, message: 'the rule set must be a YAML mapping' };
  const top = TOP_KEY[name];
  if (top && !(top in value)) return { ok: false, message: `${name} must have the top-level key \`${top}\`` };
  if (schema) {
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return { ok: false, message: `${issue.path.join('.') || 'rule set'}: ${issue.message}` };
    }
    return { ok: true, value: parsed.data as Record<string, unknown> };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

export interface LoadedRuleSet<T> {
  version: number;
  content: string;
  rules: T;
}

/** The rule set in force: the stored current version, or the shipped default (version 0). */
async function load<T>(name: RuleSetName, pick: (value: Record<string, unknown>) => T): Promise<LoadedRuleSet<T>> {
  const stored = await getCurrentRuleSet(name);
  const content = stored?.content ?? defaultRuleText(name);
  const checked = checkRuleText(name, content);
  // Stored versions were validated when written; a failure here means the schema changed under them.
  if (!checked.ok) throw new Error(`${name} version ${stored?.version ?? 0} no longer validates: ${checked.message}`);
  return { version: stored?.version ?? 0, content, rules: pick(checked.value) };
}

export const loadHealthRules = () => load<ScoringRules>('health-rules', (v) => (v as HealthRules).scoring);
export const loadRiskRules = () => load<RiskRuleSet>('risk-rules', (v) => (v as RiskRules).risk);
