// The YAML files shipped with the code in rules/ (the default rule sets, the
// LLM price list): read from the repository when running from source, or from
// `rules/` beside the bundle in Lambda, where the build also puts each one's
// validated, parsed form as JSON (see infra/bundling.ts), so no YAML is parsed there.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The rule sets stored, versioned and edited through /api/settings/<name> (each has a shipped default in rules/). */
export const RULE_SET_NAMES = ['health-rules', 'issue-rules', 'risk-rules', 'metric-sources'] as const;
export type RuleSetName = (typeof RULE_SET_NAMES)[number];
/**
 * The rule sets the scores follow: a text of theirs has an impact (which clusters change class). Issue rules group
 * alerts and metric sources say where metrics are pulled from; neither moves a cluster's class or risk level.
 */
export const SCORED_RULE_SETS = ['health-rules', 'risk-rules'] as const satisfies readonly RuleSetName[];
export type ScoredRuleSet = (typeof SCORED_RULE_SETS)[number];

const here = dirname(fileURLToPath(import.meta.url));
const CANDIDATES = [join(here, '..', '..', 'rules'), join(here, 'rules')];

const cache = new Map<string, string>();

/** The text of a shipped YAML file (`rules/<name>.yaml`), comments included. */
export function shippedText(name: string): string {
  let text = cache.get(name);
  if (text === undefined) {
    const dir = CANDIDATES.find((d) => existsSync(join(d, `${name}.yaml`)));
    if (!dir) throw new Error(`shipped file ${name}.yaml not found (looked in ${CANDIDATES.join(', ')})`);
    text = readFileSync(join(dir, `${name}.yaml`), 'utf8');
    cache.set(name, text);
  }
  return text;
}

/** A shipped YAML file as data: the build's JSON beside a bundle, else the YAML parsed (running from source). */
export async function shippedValue(name: string): Promise<unknown> {
  const json = CANDIDATES.map((dir) => join(dir, `${name}.json`)).find((file) => existsSync(file));
  if (json) return JSON.parse(readFileSync(json, 'utf8'));
  // A specifier esbuild cannot see, so Lambda bundles never include the YAML parser;
  // they always have the JSON above.
  const yamlModule = 'yaml';
  const { parse } = (await import(yamlModule)) as typeof import('yaml');
  return parse(shippedText(name), { maxAliasCount: 50 });
}

/** The shipped YAML text of a rule set, comments included. */
export const defaultRuleText = (name: RuleSetName): string => shippedText(name);

const digests = new Map<RuleSetName, string>();

/**
 * Which shipped default a rule set at version 0 is: a digest of its text. Version 0 is whatever
 * default the running release ships, so a release can replace it under a proposal made on the
 * one before; the proposal records this to tell them apart (shared/rules/editing.ts).
 */
export function defaultRuleDigest(name: RuleSetName): string {
  let digest = digests.get(name);
  if (digest === undefined) {
    digest = createHash('sha256').update(defaultRuleText(name)).digest('hex').slice(0, 16);
    digests.set(name, digest);
  }
  return digest;
}

/** The shipped default rule set as data. */
export const defaultRuleValue = (name: RuleSetName): Promise<unknown> => shippedValue(name);
