// Checking a rule set's YAML text: it must parse (with alias limits: no
// billion-laughs), be a mapping with the rule set's top-level key, and pass the
// rule set's full schema. Errors say where (line and column, or path). Used
// where rule sets are written (and by the build for the shipped defaults);
// readers use the parsed form stored with each version and never parse YAML.
import { isScalar, parseDocument, visit, type Document } from 'yaml';
import type * as z from 'zod';
import type { RuleSetName } from './defaults.js';
import { HealthRules, IssueRules, RiskRules } from './schemas.js';

/** Top-level key each rule set must have (the issue rules have none). */
export const TOP_KEY: Record<RuleSetName, string | null> = { 'health-rules': 'scoring', 'issue-rules': null, 'risk-rules': 'risk' };
export const SCHEMAS: Record<RuleSetName, z.ZodType> = { 'health-rules': HealthRules, 'issue-rules': IssueRules, 'risk-rules': RiskRules };

export type RuleCheck = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/**
 * Cheap limits checked before parsing, far beyond any real rule set (the shipped
 * ones are a few hundred lines), so that hostile text costs milliseconds:
 * the parser recurses as deep as collections nest, and its work grows with lines and aliases.
 */
export const TEXT_LIMITS = { bytes: 64 * 1024, lines: 5_000, depth: 32, aliases: 50 } as const;

/** Deepest bracket nesting, counting every bracket (quotes ignored: refusing too much here is harmless). */
function bracketDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 91 || c === 123) deepest = Math.max(deepest, ++depth); // [ {
    else if (c === 93 || c === 125) depth = Math.max(0, depth - 1); // ] }
  }
  return deepest;
}

/** Deepest block nesting: the largest indentation, in levels of at least one space. */
const indentDepth = (lines: string[]) => lines.reduce((deepest, line) => Math.max(deepest, line.length - line.trimStart().length), 0);

function limitsBroken(text: string): string | null {
  if (Buffer.byteLength(text) > TEXT_LIMITS.bytes) return `more than ${TEXT_LIMITS.bytes / 1024} KB`;
  const lines = text.split('\n');
  if (lines.length > TEXT_LIMITS.lines) return `more than ${TEXT_LIMITS.lines} lines`;
  if (bracketDepth(text) > TEXT_LIMITS.depth) return `collections nested deeper than ${TEXT_LIMITS.depth} levels`;
  // Block nesting by indentation: 2 spaces a level, so 4 × depth columns leaves room for any style.
  if (indentDepth(lines) > TEXT_LIMITS.depth * 4) return `collections nested deeper than ${TEXT_LIMITS.depth} levels`;
  const aliases = text.match(/(?:^|[\s[{,:-])\*[^\s,\]}]/g)?.length ?? 0;
  if (aliases > TEXT_LIMITS.aliases) return `more than ${TEXT_LIMITS.aliases} aliases`;
  return null;
}

/** The first mapping key that occurs twice in one mapping, with its position (linear: a Set per mapping). */
function duplicateKey(doc: Document): { key: string; offset: number } | null {
  let found: { key: string; offset: number } | null = null;
  visit(doc, {
    Map(_, map) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        if (seen.has(key)) {
          found = { key, offset: isScalar(pair.key) ? (pair.key.range?.[0] ?? 0) : 0 };
          return visit.BREAK;
        }
        seen.add(key);
      }
      return undefined;
    },
  });
  return found;
}

function lineColumn(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, col: before.at(-1)!.length + 1 };
}

/** Checks a rule set's YAML text. `message` says what is wrong and where. */
export function checkRuleText(name: RuleSetName, text: string, schema = SCHEMAS[name]): RuleCheck {
  const broken = limitsBroken(text);
  if (broken) return { ok: false, message: `invalid YAML: ${broken}` };
  // Duplicate keys are found below in one pass; the parser's own check is quadratic in the keys of a mapping.
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: false });
  const error = doc.errors[0];
  if (error) {
    const at = error.linePos?.[0];
    const what = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    return { ok: false, message: `invalid YAML${at ? ` at line ${at.line}, column ${at.col}` : ''}: ${what}` };
  }
  const duplicate = duplicateKey(doc);
  if (duplicate) {
    const at = lineColumn(text, duplicate.offset);
    return { ok: false, message: `invalid YAML at line ${at.line}, column ${at.col}: the key \`${duplicate.key}\` appears twice in one mapping` };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: TEXT_LIMITS.aliases });
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

