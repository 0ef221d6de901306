// The default rule sets shipped with the code (rules/*.yaml): read from the
// repository when running from source, or from `rules/` beside the bundle in
// Lambda, where the build also puts each one's validated, parsed form as JSON
// (see infra/bundling.ts), so no YAML is parsed there.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const RULE_SET_NAMES = ['health-rules', 'issue-rules', 'risk-rules'] as const;
export type RuleSetName = (typeof RULE_SET_NAMES)[number];

const here = dirname(fileURLToPath(import.meta.url));
const CANDIDATES = [join(here, '..', '..', 'rules'), join(here, 'rules')];

const cache = new Map<RuleSetName, string>();

/** The shipped YAML text of a rule set, comments included. */
export function defaultRuleText(name: RuleSetName): string {
  let text = cache.get(name);
  if (text === undefined) {
    const dir = CANDIDATES.find((d) => existsSync(join(d, `${name}.yaml`)));
    if (!dir) throw new Error(`default rule set ${name}.yaml not found (looked in ${CANDIDATES.join(', ')})`);
    text = readFileSync(join(dir, `${name}.yaml`), 'utf8');
    cache.set(name, text);
  }
  return text;
}

/** The shipped default as data: the build's JSON beside a bundle, else the YAML parsed (running from source). */
export async function defaultRuleValue(name: RuleSetName): Promise<unknown> {
  const json = CANDIDATES.map((dir) => join(dir, `${name}.json`)).find((file) => existsSync(file));
  if (json) return JSON.parse(readFileSync(json, 'utf8'));
  // A specifier esbuild cannot see, so Lambda bundles never include the YAML parser;
  // they always have the JSON above.
  const yamlModule = 'yaml';
  const { parse } = (await import(yamlModule)) as typeof import('yaml');
  return parse(defaultRuleText(name), { maxAliasCount: 50 });
}
