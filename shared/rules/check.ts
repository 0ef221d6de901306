// Checking a rule set's YAML text: it must parse (with alias limits: no
// billion-laughs), be a mapping with the rule set's top-level key, and pass the
// rule set's full schema. Errors say where (line and column, or path). Used
// where rule sets are written (and by the build for the shipped defaults);
// readers use the parsed form stored with each version and never parse YAML.
import { parseDocument } from 'yaml';
import type * as z from 'zod';
import type { RuleSetName } from './defaults.js';
import { HealthRules, IssueRules, RiskRules } from './schemas.js';

/** Top-level key each rule set must have (the issue rules have none). */
export const TOP_KEY: Record<RuleSetName, string | null> = { 'health-rules': 'scoring', 'issue-rules': null, 'risk-rules': 'risk' };
export const SCHEMAS: Record<RuleSetName, z.ZodType> = { 'health-rules': HealthRules, 'issue-rules': IssueRules, 'risk-rules': RiskRules };

export type RuleCheck = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/** Deeper flow nesting (`[[[[…`) than any rule set needs; refused before parsing, which would recurse that deep. */
export const MAX_FLOW_DEPTH = 64;

/** The deepest nesting of flow collections, ignoring quoted text and comments (a cheap pre-check). */
function flowDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let quote = '';
  let comment = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (comment) {
      if (c === '\n') comment = false;
    } else if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) comment = true;
    else if (c === '[' || c === '{') deepest = Math.max(deepest, ++depth);
    else if (c === ']' || c === '}') depth = Math.max(0, depth - 1);
  }
  return deepest;
}

/** Checks a rule set's YAML text. `message` says what is wrong and where. */
export function checkRuleText(name: RuleSetName, text: string, schema = SCHEMAS[name]): RuleCheck {
  if (flowDepth(text) > MAX_FLOW_DEPTH) return { ok: false, message: `invalid YAML: collections nested deeper than ${MAX_FLOW_DEPTH} levels` };
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const error = doc.errors[0];
  if (error) {
    const at = error.linePos?.[0];
    const what = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    return { ok: false, message: `invalid YAML${at ? ` at line ${at.line}, column ${at.col}` : ''}: ${what}` };
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
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, message: `${issue.path.join('.') || 'rule set'}: ${issue.message}` };
  }
  return { ok: true, value: parsed.data as Record<string, unknown> };
}

